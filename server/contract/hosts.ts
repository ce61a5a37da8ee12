import { liveEvent } from './events.js';
import type { DeployCommand, DownloadCommand, GuestActionCommand, LogsCommand, UploadCommand } from './operations.js';
import type { Collectors, Guest } from './inputs/hosts.js';
import type { ScriptCommand } from './scripts.js';
import type { AgentChannel } from './versions.js';

export type HostStatus = 'online' | 'offline' | 'deleting' | 'deleted';
export type UpgradeState = 'pending' | 'in_progress' | 'succeeded' | 'failed';

/** What the stream sends for host.heartbeat and host.status: cheap to build on every heartbeat. */
export interface HostEvent {
  id: number;
  hostname: string;
  status: HostStatus;
  last_heartbeat_at: string | null;
  agent_version: string;
}

// A guest is written once, as a heartbeat reports it (inputs/hosts.ts).
export type { Collector, Collectors, Guest } from './inputs/hosts.js';

export interface HostRef {
  id: number;
  hostname: string;
}

export type DriftItem =
  | { kind: 'guest_without_instance'; vmid: number; guest_name: string; guest_type: 'qemu' | 'lxc' }
  | { kind: 'name_differs'; vmid: number; guest_name: string; instance_name: string; instance_stack: 'production' | 'development' }
  /** Another live host reports the same vmid: shown on each of them, never applied. */
  | { kind: 'conflict'; vmid: number; guest_name: string; instance_name: string | null; other_hosts: HostRef[] };

/** The latest agent upgrade asked of a host (an in-progress one past its time shows failed). */
export interface HostUpgrade {
  state: UpgradeState;
  version: string;
  from: string | null;
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** A host as GET /api/hosts lists it (with counts); the detail adds guests, drift and deletion. */
export interface HostSummary {
  id: number;
  hostname: string;
  machine_id: string;
  status: HostStatus;
  enrolled_at: string;
  last_heartbeat_at: string | null;
  agent_version: string;
  agent_started_at: string | null;
  heartbeat_interval_s: number;
  addresses: string[];
  uptime_s: number | null;
  hypervisor_version: string;
  sync_registry: boolean;
  /** The agent was installed with `--allow-scripts` (its heartbeats say so): scripts may run on the host itself. */
  allows_scripts: boolean;
  /** An unused, unexpired re-bind token exists for this host. */
  allow_rebind: boolean;
  /** The release channel whose versions the host is offered (`stable` unless set). */
  agent_channel: AgentChannel;
  /** The agent version the host is held at: never offered or automatically given another. */
  agent_pin: string | null;
  /** The agent's collectors, sent to it in each heartbeat answer (all on unless set). */
  collectors: Collectors;
  /** A shipped agent of the host's channel is newer than the one it runs (never for a pinned host, or one being removed). */
  upgrade_available: boolean;
  /** That newer version: what an upgrade without a version installs; null when none is available. */
  upgrade_to: string | null;
  deleted_at: string | null;
  upgrade: HostUpgrade | null;
  guest_count: number;
  drift_count: number;
}

/**
 * A host's removal: the uninstall command goes out at the next heartbeat, the agent's receipt confirms
 * it. `expired`: no receipt came while its token was valid (7 days); only a forced removal ends it now.
 */
export interface Deletion {
  operation_id: string;
  status: 'pending' | 'delivered' | 'confirmed' | 'forced' | 'expired';
  created_by: string | null;
  created_at: string;
  delivered_at: string | null;
  confirmed_at: string | null;
  receipt_expires_at: string | null;
}

/** A host as the list shows it, less what needs its guests counted: what the server's own readers (the alert rules) take. */
export type HostBrief = Omit<HostSummary, 'guest_count' | 'drift_count'>;

/** GET /api/hosts/:id */
export interface HostDetail extends HostSummary {
  guests: Guest[];
  drift: DriftItem[];
  deletion: Deletion | null;
}

/** What a drift apply did, and what it left with the reason (production renames, conflicts). */
export interface DriftResult {
  applied: DriftItem[];
  skipped: { vmid: number; error: string }[];
}

/** DELETE /api/hosts/:id[?force=true]: 202 while the host's receipt is awaited, 200 removed by force. */
export interface HostRemoval {
  operation_id: string;
  status: Deletion['status'];
}

export type EnrollmentTokenState = 'active' | 'expired' | 'used_up' | 'revoked';

/** GET /api/hosts/enrollment-tokens: never the token itself. */
export interface EnrollmentToken {
  id: number;
  name: string;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  max_uses: number;
  uses: number;
  revoked_at: string | null;
  state: EnrollmentTokenState;
  /** A re-bind token: it enrolls only this host's machine again. */
  host_id: number | null;
}

/** The 201 of POST /api/hosts/enrollment-tokens: the `hfe_` token (shown once) and the install command that carries it. */
export interface CreatedEnrollmentToken {
  id: number;
  token: string;
  expires_at: string;
  max_uses: number;
  host_id: number | null;
  install_command: string;
  /** Why the command cannot work from another machine yet (plain HTTP, a loopback address); empty when it can. */
  install_notes: string[];
}

// ---- the agent's side (reporter/host-agent.sh) --------------------------------------------

/** The 201 of POST /api/agent/enroll: the `hfh_` host token, shown this once. */
export interface EnrollAnswer {
  host_id: number;
  host_token: string;
  heartbeat_interval_s: number;
  manifest_public_key: string;
}

/** The agent removes itself and confirms with the receipt token at POST /api/agent/receipts/<operation_id>. */
export interface UninstallCommand {
  type: 'uninstall';
  operation_id: string;
  receipt_token: string;
}

/** The agent fetches `version` from the signed manifest; `rollback`: it is older than the one running. */
export interface UpgradeCommand {
  type: 'upgrade';
  version: string;
  rollback?: true;
}

/** Every command the heartbeat answer can carry (PRODUCT.md `commands: [...]`); guest actions and log requests also come through GET /api/agent/commands. */
export type AgentCommand = UninstallCommand | UpgradeCommand | GuestActionCommand | LogsCommand | DeployCommand | DownloadCommand | UploadCommand | ScriptCommand;

export interface HeartbeatAnswer {
  heartbeat_interval_s: number;
  commands: AgentCommand[];
  /** Which collectors the agent runs from now on: one that is off is skipped (its pvesh/pvesm/qm/pct calls are not made). */
  collectors: Collectors;
}

/** One agent version of the signed release manifest (GET /api/agent/releases/manifest.json). */
export interface ManifestAgent {
  version: string;
  url: string;
  sha256: string;
  size: number;
  min_controller_version: string;
  upgradable_from: string;
  /** `beta` when the version has a pre-release part (`1.2.0-rc.1`), else `stable`. */
  channel: AgentChannel;
}

export interface Manifest {
  manifest_version: number;
  agents: ManifestAgent[];
  issued_at: string;
  expires_at: string;
}

export const hostEvents = {
  'host.status': liveEvent<HostEvent>('hosts.read'),
  'host.heartbeat': liveEvent<HostEvent>('hosts.read'),
};
