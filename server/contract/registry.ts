import { liveEvent } from './events.js';

export const STATES = ['deployed', 'testing', 'degraded'] as const;
export type State = (typeof STATES)[number];
export const STACKS = ['production', 'development'] as const;
export type Stack = (typeof STACKS)[number];
export const FLAGS = ['atlas', 'argus', 'semaphore', 'patchmon', 'tailscale', 'andromeda', 'hardware_acceleration'] as const;
export type Flag = 0 | 1;

/** An instance as the API returns it. */
export interface Instance {
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
  created_at: string;
  updated_at: string;
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

export const registryEvents = {
  'instance.created': liveEvent<{ instance: Instance }>('fleet.read'),
  /** `previous_vmid` is the vmid before the change (a renumbered instance's page follows it). */
  'instance.updated': liveEvent<{ instance: Instance; changed: string[]; previous_vmid: number }>('fleet.read'),
  'instance.deleted': liveEvent<{ vmid: number }>('fleet.read'),
};
