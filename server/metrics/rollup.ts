import type { AppContext } from '../context.js';
import { decodeChunk, encodeChunk } from './chunk.js';
import { decodeFrame, encodeFrame, mergeFrames, type Frame } from './frame.js';
import { bucketOf, chunkOf, chunkSpan, TIERS, type Tier } from './keys.js';
import type { MetricRepo } from './repo.js';
import type { StoreReader } from './store.js';

/** Buckets rolled up in one transaction: a few milliseconds of work, so a request waits at most that long. */
const BUCKETS_PER_TX = 16;

/**
 * The background work of the metric store, in small transactions with a pause for requests between
 * them: roll finished buckets up into the next tier (1 min → 15 min → 6 h), seal finished spans of
 * each tier into compressed chunks, and drop what is older than the tier keeps.
 */
export function createRollups(ctx: Pick<AppContext, 'transaction'>, repo: MetricRepo, store: StoreReader) {
  /** Rolls up to BUCKETS_PER_TX finished buckets of `tier`; true when more are waiting. */
  const rollStep = ctx.transaction((hostId: number, tier: 1 | 2, now: number): boolean => {
    const { step } = TIERS[tier];
    const finer = (tier - 1) as Tier;
    store.forget();
    const end = bucketOf(tier, now);
    let t = repo.doneUntil(hostId, tier) ?? firstData(hostId, finer, 0, end);
    if (t === undefined) return false;
    t = bucketOf(tier, t);
    for (let done = 0; t < end && done < BUCKETS_PER_TX; ) {
      const merged = mergeFrames(store.frames(hostId, finer, t, t + step).map((f) => f.frame));
      if (merged) {
        repo.putBucket(hostId, tier, t, encodeFrame(merged));
        done++;
        t += step;
      } else {
        // A gap (the host was away): go straight to the next finer bucket there is.
        const next = firstData(hostId, finer, t + step, end);
        t = next === undefined ? end : bucketOf(tier, next);
      }
    }
    repo.setDoneUntil(hostId, tier, Math.min(t, end));
    return t < end;
  });

  function firstData(hostId: number, tier: Tier, from: number, to: number): number | undefined {
    const row = repo.firstTime(hostId, tier, from, to, 'bucket');
    const chunk = repo.firstTime(hostId, tier, chunkOf(tier, from), to, 'chunk');
    const candidates = [row, chunk === undefined ? undefined : Math.max(chunk, from)].filter((v): v is number => v !== undefined);
    return candidates.length ? Math.min(...candidates) : undefined;
  }

  /** Seals the oldest finished span of `tier` that still has bucket rows; true when it sealed one. */
  const sealOne = ctx.transaction((hostId: number, tier: Tier, now: number): boolean => {
    const span = chunkSpan(tier);
    // A span is finished when it is past, and (coarser tiers) every bucket of it has been rolled up.
    const limit = tier === 0 ? bucketOf(0, now) : Math.min(bucketOf(tier, now), repo.doneUntil(hostId, tier) ?? 0);
    const first = repo.firstTime(hostId, tier, 0, limit, 'bucket');
    if (first === undefined) return false;
    const start = chunkOf(tier, first);
    if (start + span > limit) return false;
    const { step, chunk: size } = TIERS[tier];
    const frames: (Frame | undefined)[] = new Array(size).fill(undefined);
    const existing = repo.chunk(hostId, tier, start);
    if (existing) decodeChunk(existing).forEach((f, k) => (frames[k] = f));
    for (const row of repo.buckets(hostId, tier, start, start + span)) {
      const k = (row.t - start) / step;
      const frame = decodeFrame(row.data);
      frames[k] = frames[k] ? mergeFrames([frames[k]!, frame]) : frame;
    }
    repo.putChunk(hostId, tier, start, encodeChunk(frames));
    repo.deleteBuckets(hostId, tier, start, start + span);
    store.forget();
    return true;
  });

  const prune = ctx.transaction((hostId: number, now: number) => {
    TIERS.forEach(({ step, keepS }, i) => {
      const tier = i as Tier;
      const cutoff = now - keepS;
      // Whole buckets and whole chunks that ended before the cutoff.
      repo.deleteBuckets(hostId, tier, 0, Math.max(0, cutoff - step + 1));
      repo.deleteChunks(hostId, tier, 0, Math.max(0, cutoff - chunkSpan(tier) + 1));
    });
  });

  return {
    /** One pass over every host (`now` in Unix seconds); `pause` runs between transactions. */
    async run(now: number, pause: () => Promise<void> = () => new Promise((resolve) => setImmediate(resolve))): Promise<void> {
      for (const hostId of repo.hosts()) {
        for (const tier of [1, 2] as const) {
          while (rollStep(hostId, tier, now)) await pause();
          await pause();
        }
        // Pruned before sealing: what is past keeping is dropped, not packed first (after a long stop).
        prune(hostId, now);
        await pause();
        for (const tier of [0, 1, 2] as const) {
          while (sealOne(hostId, tier, now)) await pause();
        }
      }
    },
  };
}

export type Rollups = ReturnType<typeof createRollups>;
