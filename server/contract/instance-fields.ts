// The values an instance's fields take, and the keys its list sorts by: the registry's answers (registry.ts) and the schema of what a
// client writes (inputs/registry.ts) both name them, so they stand apart from either.

export const STATES = ['deployed', 'testing', 'degraded'] as const;
export type State = (typeof STATES)[number];
export const STACKS = ['production', 'development'] as const;
export type Stack = (typeof STACKS)[number];
export const FLAGS = ['atlas', 'argus', 'semaphore', 'patchmon', 'tailscale', 'andromeda', 'hardware_acceleration'] as const;
export type Flag = 0 | 1;
export const SORT_KEYS = ['name', 'vmid', 'updated_at', 'created_at'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
