import { liveEvent } from './events.js';
import type { MaintenancePolicyInput, OperationStatus } from './inputs/operations.js';
import type { ScriptCommand } from './scripts.js';

// The statuses and weekdays are named once, with the schemas that take them (inputs/operations.ts).
export type { OperationStatus, Weekday } from './inputs/operations.js';

/** PRODUCT.md "Guest control through agents": every command an agent receives is an operation. */
export const OPERATION_TYPES = ['guest.action', 'logs', 'upgrade', 'uninstall', 'deploy', 'download', 'upload', 'script'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];
/** An operation that is over: it changes no more. */
export const FINISHED_STATUSES: readonly OperationStatus[] = ['succeeded', 'failed', 'expired', 'cancelled'];

export const GUEST_ACTIONS = ['start', 'shutdown', 'stop', 'reboot', 'snapshot', 'rollback', 'clone', 'destroy', 'rebuild'] as const;
export type GuestAction = (typeof GUEST_ACTIONS)[number];
/** Refused outside an open maintenance window unless an administrator forces them. */
export const DISRUPTIVE_ACTIONS: readonly GuestAction[] = ['shutdown', 'stop', 'reboot', 'rollback', 'destroy', 'rebuild'];
/** What a Proxmox template can be asked for: it is cloned (deploy) or removed; it never runs, so nothing else applies (409 `guest is a template`). */
export const TEMPLATE_ACTIONS: readonly GuestAction[] = ['clone', 'destroy'];
/** What each verb may take on the host, in seconds (the agent's `timeout`). */
export const ACTION_TIME_LIMITS_S: Record<GuestAction, number> = {
  stop: 60,
  start: 120,
  shutdown: 300,
  reboot: 300,
  snapshot: 600,
  rollback: 600,
  destroy: 600,
  clone: 1800,
  // A rebuild is an operation of type `deploy` (stop, destroy, deploy, start): the agent's deploy limit.
  rebuild: 1800,
};
/** "Time limit 1800 s" of a deploy on the host. */
export const DEPLOY_TIME_LIMIT_S = 1800;

/** A field of an operation's `params`: a deploy's network is an object, its server key ids a list. */
export type OperationParam = string | number | boolean | null | number[] | string[] | { [field: string]: string | number | boolean | null };

/** The 202 of an action or a log request. */
export interface OperationAccepted {
  operation_id: string;
  status: 'pending';
}

/**
 * GET /api/operations and /api/operations/:id. `output` (the last 4 KiB the agent sent; for `logs`
 * the last 64 KiB, cut where a line starts; for `script` the last 64 KiB) only for `diagnostics.read`; absent otherwise and on the
 * live event. `params` holds the action's own fields (a snapshot's name, a clone's new vmid and
 * name, an upgrade's version, a deploy's spec: ids of keys and configs, never their text).
 */
export interface Operation {
  id: string;
  host_id: number;
  vmid: number | null;
  type: OperationType;
  action: GuestAction | null;
  status: OperationStatus;
  params: Record<string, OperationParam>;
  reason: string | null;
  requested_by: string | null;
  requested_at: string;
  sent_at: string | null;
  finished_at: string | null;
  exit_code: number | null;
  output?: string | null;
}

// ---- what agents receive and send ------------------------------------------------------------

/** A guest action as the agent reads it: the verb and the fields it builds its own argument list from. */
export interface GuestActionCommand {
  type: 'guest.action';
  operation_id: string;
  vmid: number;
  guest_type: 'qemu' | 'lxc';
  action: GuestAction;
  name?: string;
  snapshot?: string;
  new_vmid?: number;
  full?: boolean;
}

/**
 * A deploy (or a rebuild: the same, after stopping and destroying the guest it replaces) as the agent
 * reads it (PRODUCT.md "Deploy, rebuild and server keys"). The agent refuses it whole (exit 126,
 * nothing run) for a field of the wrong type or outside PRODUCT's patterns, a source its last
 * heartbeat did not list or of the other kind, a listed `new_vmid` (unless `rebuild` names that
 * guest), a key line that is not an OpenSSH public key, `storage` without `full` on a clone,
 * `cloud_config` without `snippets_storage`, keys, a cloud config or `ci_user` for a cloned
 * container (a cloud config or `ci_user` for a template volume), and `disk_gb` without `storage`
 * for a template volume. A step that fails reports its exit code and output, ending with
 * `homefleet-agent: the deploy failed at: <step> (exit N)`; a guest it had made is destroyed again.
 */
export interface DeployCommand {
  type: 'deploy';
  operation_id: string;
  new_vmid: number;
  /** true: `new_vmid` is an existing guest of this host being rebuilt: stop it, destroy it (--purge), then deploy. */
  rebuild: boolean;
  source: { kind: 'qemu' | 'lxc'; vmid: number } | { kind: 'volume'; volume: string };
  name: string;
  full?: boolean;
  storage?: string;
  cores?: number;
  memory_mb?: number;
  disk_gb?: number;
  network?: { bridge: string; vlan?: number; ip: 'dhcp' | string; gateway?: string };
  ci_user?: string;
  /** OpenSSH public key lines (the saved server keys the launch named). */
  ssh_keys: string[];
  /** cloud-init user-data to place as snippets/homefleet-<new_vmid>.yaml in snippets_storage. */
  cloud_config?: string;
  snippets_storage?: string;
  start: boolean;
}

/**
 * A download onto a storage (PRODUCT.md "Host storage"): the agent runs `pvesh create
 * /nodes/<node>/storage/<storage>/download-url --url <url> --filename <filename> --content <content>
 * [--checksum <checksum> --checksum-algorithm <algorithm>]` as an argument list; Proxmox fetches and verifies.
 */
export interface DownloadCommand {
  type: 'download';
  operation_id: string;
  storage: string;
  url: string;
  filename: string;
  content: 'iso' | 'vztmpl' | 'import';
  checksum?: string;
  checksum_algorithm?: 'sha256' | 'sha512';
}

/**
 * A cached file pushed onto a storage: the agent fetches `GET /api/agent/files/<file_id>` with its
 * host token (resuming with `Range`), checks `size` and `sha256`, writes a temp file in the storage's
 * folder for `content` (`pvesm path <storage>:<content>/<name>`) and renames it into place; a file of
 * that name with another hash fails with "exists" unless `replace`.
 */
export interface UploadCommand {
  type: 'upload';
  operation_id: string;
  file_id: number;
  name: string;
  size: number;
  sha256: string;
  storage: string;
  content: 'iso' | 'vztmpl' | 'snippets' | 'import';
  replace: boolean;
}

/** The agent answers with the last 200 lines of its own journal as `output`. */
export interface LogsCommand {
  type: 'logs';
  operation_id: string;
}

/** GET /api/agent/commands?wait=N: 200 with the commands, or 204 when none came within N seconds. */
export interface CommandsAnswer {
  commands: (GuestActionCommand | LogsCommand | DeployCommand | DownloadCommand | UploadCommand | ScriptCommand)[];
}

/** GET /api/hosts/:id/guests/:vmid/configs: the kept versions (the last 20), newest first. */
export interface GuestConfigVersion {
  id: number;
  sha256: string;
  received_at: string;
  size: number;
}

// ---- maintenance ---------------------------------------------------------------------------

/** GET (and the 200 of PUT) /api/hosts/:id/maintenance. */
export interface MaintenancePolicy extends MaintenancePolicyInput {
  /** A window is open now (always false without windows: then nothing waits for one). */
  window_open: boolean;
  updated_by: string | null;
  updated_at: string | null;
}

export const operationEvents = {
  // "Live events: operation.updated (fleet.read, without output)."
  'operation.updated': liveEvent<Omit<Operation, 'output'>>('fleet.read'),
};
