import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { OperationAccepted, OperationStatus } from '../contract/operations.js';
import type { GuestActionRequest } from '../contract/inputs/operations.js';
import type { ScriptTarget } from '../contract/scripts.js';
import type { AgentChannel } from '../contract/versions.js';
import type { CampaignRepo } from './repo.js';

/** Who asks, for the operations' `requested_by`. */
export interface Who {
  actor: string | null;
}

/** A host as a campaign needs it (server/hosts, handed over by server/services.ts). */
export interface FleetHost {
  id: number;
  hostname: string;
  state: 'active' | 'deleting' | 'deleted';
  /** A heartbeat within the last three intervals. */
  online: boolean;
  agent_version: string;
  agent_channel: AgentChannel;
  agent_pin: string | null;
}

/** A guest of a host's last heartbeat. */
export interface FleetGuest {
  vmid: number;
  name: string;
  template: boolean;
  lock: string | null;
}

/** What campaigns read of hosts, guests and maintenance windows. */
export interface CampaignFleet {
  host(id: number, now: number): FleetHost | undefined;
  guestsOf(hostId: number): FleetGuest[];
  guest(hostId: number, vmid: number): FleetGuest | undefined;
  /** The host that runs the vmid now, as the registry shows it (an online host before one that went offline). */
  hostOf(vmid: number): number | undefined;
  /** The registry's names of these vmids (those it has), for guests no host reports. */
  registryNames(vmids: readonly number[]): ReadonlyMap<number, string>;
  /** Disruptive work waits for a window: true when the host has windows and none is open at `now`. */
  maintenanceClosed(hostId: number, now: number): boolean;
}

/**
 * How a campaign's step reaches a host: each launch queues one operation inside the caller's
 * transaction and throws the HttpError its route would answer (404, 409 busy, offline, …).
 */
export interface CampaignLaunchers {
  guestAction(hostId: number, vmid: number, body: GuestActionRequest, who: Who): OperationAccepted;
  /** A script run (server/operations/scripts.ts `scripts.request`): `vmid` null runs it on the host itself. */
  script(hostId: number, vmid: number | null, scriptId: number, timeoutS: number | undefined, who: Who): OperationAccepted;
  /** `operations.requestUpgrade`: answers the upgrade's operation id; the heartbeat rule settles it. */
  upgrade(hostId: number, version: string, who: Who): string;
  /** Every agent version the controller ships, and the newest of them a host on `channel` is given. */
  agentVersions(): string[];
  newestAgent(channel: AgentChannel): string | undefined;
  /** Where a script runs (undefined: no such script), so that a campaign names the right targets. */
  scriptRunsOn(id: number): ScriptTarget | undefined;
  /** An operation's outcome as it is now; undefined when there is none of that id. */
  operation(id: string): { status: OperationStatus; exit_code: number | null } | undefined;
  /** Cancels a pending operation (an HttpError once it was sent); `managesHosts` for an upgrade. */
  cancel(id: string, who: Who, managesHosts: boolean): void;
}

/** The instances a collection matches now (server/collections); the 404 HttpError when there is no such collection. */
export interface CampaignCollections {
  vmidsOf(id: number): number[];
}

export interface CampaignDeps {
  audit: AuditLog;
  fleet: CampaignFleet;
  collections: CampaignCollections;
  launch: CampaignLaunchers;
}

export interface CampaignParts extends CampaignDeps {
  ctx: AppContext;
  repo: CampaignRepo;
}
