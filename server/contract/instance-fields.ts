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
/** A tag (PRODUCT.md "Collections, scripts, campaigns and release channels"): an instance carries 0–16, lower-cased, deduplicated, sorted. */
export const TAG = /^[a-z0-9][a-z0-9_.-]{0,31}$/;
export const MAX_TAGS = 16;
/** How a tag is refused, in every place that reads one. */
export const TAG_RULE = 'must be a tag: a letter or digit, then letters, digits, _ . - (at most 32)';
/** Tags as a person writes them, as the server keeps them: lower-cased, deduplicated, sorted. */
export const normalTags = (tags: readonly string[]): string[] => [...new Set(tags.map((t) => t.toLowerCase()))].sort();
