import { liveEvent } from './events.js';

export const STATES = ['deployed', 'testing', 'degraded'] as const;
export type State = (typeof STATES)[number];
export const STACKS = ['production', 'development'] as const;
export type Stack = (typeof STACKS)[number];
export const FLAGS = ['atlas', 'argus', 'semaphore', 'patchmon', 'tailscale', 'andromeda', 'hardware_acceleration'] as const;
export type Flag = 0 | 1;

/**
 * An instance as a client writes it (POST /api/instances), as the server reads it: `tailscale_ip`
 * ("" when absent) and the flags (0 when absent) may be left out of the body. PUT takes any subset
 * (`InstanceUpdate`), merged over the stored instance and then checked whole.
 */
export interface InstanceInput {
  vmid: number;
  name: string;
  state: State;
  stack: Stack;
  tailscale_ip: string;
  atlas: Flag;
  argus: Flag;
  semaphore: Flag;
  patchmon: Flag;
  tailscale: Flag;
  andromeda: Flag;
  hardware_acceleration: Flag;
}

export type InstanceUpdate = Partial<InstanceInput>;

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

export const SORT_KEYS = ['name', 'vmid', 'updated_at', 'created_at'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/**
 * GET /api/instances?search=&state=&stack=&host_id=&sort=&order=: forgiving by rule, an unknown `sort` is
 * `name`, only `order=desc` is descending, and an empty filter is no filter. `host_id` is a host's id,
 * or `none` for the instances no host reports.
 */
export interface InstanceListParams {
  search?: string | string[];
  state?: string | string[];
  stack?: string | string[];
  host_id?: string | string[];
  sort?: string | string[];
  order?: string | string[];
}

/** GET /api/instances/stacks: the stacks in use, in order. */
export type StackList = string[];

export const registryEvents = {
  'instance.created': liveEvent<{ instance: PlacedInstance }>('fleet.read'),
  /** `previous_vmid` is the vmid before the change (a renumbered instance's page follows it); `changed` may name `host` and `guest_status`, which an agent's heartbeat moves, and `tailscale_ipv6`, which tailscale_sync does. */
  'instance.updated': liveEvent<{ instance: PlacedInstance; changed: string[]; previous_vmid: number }>('fleet.read'),
  'instance.deleted': liveEvent<{ vmid: number }>('fleet.read'),
};
