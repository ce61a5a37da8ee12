import { liveEvent } from './events.js';
import type { InstanceInput } from './inputs/registry.js';
import type { DeploySpec } from './provisioning.js';

export { FLAGS, MAX_TAGS, SORT_KEYS, STACKS, STATES, TAG, TAG_RULE, normalTags, type Flag, type SortKey, type Stack, type State } from './instance-fields.js';

/** An instance as the API returns it. */
export interface Instance extends InstanceInput {
  created_at: string;
  updated_at: string;
}

/** The host whose agent reports an instance's guest. */
export interface InstanceHost {
  id: number;
  name: string;
}

/**
 * An instance as GET /api/instances and /api/instances/:vmid show it and the live events carry it:
 * where it runs (`host`, the live host whose last heartbeat listed its vmid, else null) and
 * `guest_status` (that guest's status then, else null); `tailscale_ipv6`, the IPv6 tailnet address of
 * the device tailscale_sync last matched (else null: `tailscale_ip` stays IPv4, as the registry
 * specification has it). All three are read-only, not in the backup, never in history.
 */
export interface PlacedInstance extends Instance {
  host: InstanceHost | null;
  guest_status: string | null;
  tailscale_ipv6: string | null;
}

/**
 * An instance in GET /api/instances. With `?at=` in the past it is the instance as it was then,
 * rebuilt from history: `host`, `guest_status` and `tailscale_ipv6`, never written to history, are
 * null, and `current_vmid` says which vmid it has now (null: deleted since). Absent from answers about now.
 */
export interface ListedInstance extends PlacedInstance {
  current_vmid?: number | null;
}

/** GET /api/instances/:vmid: the instance where it runs, and how homefleet deployed its guest (null when it did not; always null with `?at=` in the past). */
export interface InstanceDetail extends ListedInstance {
  deploy: DeploySpec | null;
}

export interface HistoryEntry {
  id: number;
  vmid: number;
  field: string;
  old_value: string | null;
  new_value: string | null;
  changed_at: string;
  /** Who made the change: a username, `job:<key>`, `agent:<hostname>`, `import`; null when unknown. */
  changed_by: string | null;
}

/** POST /api/instances/bulk: how many instances the edit changed (those it left as they were are not counted). */
export interface BulkEdited {
  updated: number;
}

/** GET /api/instances/stacks: the stacks in use, in order. */
export type StackList = string[];

export const registryEvents = {
  'instance.created': liveEvent<{ instance: PlacedInstance }>('fleet.read'),
  /** `previous_vmid` is the vmid before the change (a renumbered instance's page follows it); `changed` may name `host` and `guest_status`, which an agent's heartbeat moves, and `tailscale_ipv6`, which tailscale_sync does. */
  'instance.updated': liveEvent<{ instance: PlacedInstance; changed: string[]; previous_vmid: number }>('fleet.read'),
  'instance.deleted': liveEvent<{ vmid: number }>('fleet.read'),
};
