/** The resolutions, finest first: bucket length, how long they are kept, and how many buckets a sealed chunk holds. */
export const TIERS = [
  { step: 60, keepS: 48 * 3600, chunk: 60 },
  { step: 900, keepS: 35 * 86_400, chunk: 96 },
  { step: 21_600, keepS: 400 * 86_400, chunk: 28 },
] as const;
export type Tier = 0 | 1 | 2;

const T_BITS = 2 ** 34;

/** The rowid of a bucket or chunk: (host_id * 4 + tier) * 2^34 + t (see migration 0011). */
export const keyOf = (hostId: number, tier: Tier, t: number): number => (hostId * 4 + tier) * T_BITS + t;
export const timeOf = (key: number): number => key % T_BITS;

/** The start of the bucket of `tier` that holds `t` (Unix seconds). */
export const bucketOf = (tier: Tier, t: number): number => t - (t % TIERS[tier].step);
export const chunkSpan = (tier: Tier): number => TIERS[tier].step * TIERS[tier].chunk;
/** The start of the chunk of `tier` that holds `t`. */
export const chunkOf = (tier: Tier, t: number): number => t - (t % chunkSpan(tier));
