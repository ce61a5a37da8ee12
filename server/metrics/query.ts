import type { MetricPoint, MetricsAnswer } from '../contract/metrics.js';
import { isoMillis } from '../time.js';
import { TIERS, type Tier } from './keys.js';
import type { MetricRepo } from './repo.js';
import { coarsen, type Point, type StoreReader } from './store.js';

/** "the finest resolution that gives at most 1,500 points" */
export const MAX_POINTS = 1500;

/**
 * The finest tier whose buckets over [from, to) number at most MAX_POINTS and which still keeps
 * `from` (a 15-minute chart of 40 days ago would be empty: that tier keeps 35 days); else the coarsest.
 */
export function chooseTier(from: number, to: number, now: number): Tier {
  for (let i = 0; i < TIERS.length; i++) {
    const { step, keepS } = TIERS[i]!;
    if ((to - from) / step <= MAX_POINTS && from >= now - keepS - step) return i as Tier;
  }
  return (TIERS.length - 1) as Tier;
}

/**
 * A subject's series at a tier: what that tier stores, and after the point its roll-up has reached,
 * the finer tier's buckets gathered on the fly, so the newest bucket of a 7-day chart is not missing.
 */
export function createQuery(repo: MetricRepo, store: StoreReader) {
  function points(hostId: number, vmid: number, tier: Tier, from: number, to: number, slots: readonly number[]): Point[][] {
    if (tier === 0) return store.points(hostId, vmid, 0, from, to, slots);
    const rolled = repo.doneUntil(hostId, tier) ?? from;
    const stored = rolled > from ? store.points(hostId, vmid, tier, from, Math.min(to, rolled), slots) : slots.map(() => []);
    if (to <= rolled) return stored;
    const tail = points(hostId, vmid, (tier - 1) as Tier, Math.max(from, rolled), to, slots);
    return stored.map((list, i) => [...list, ...coarsen(tail[i]!, TIERS[tier].step)]);
  }

  return {
    /** `from`, `to` and `now` in ms; `series` names each with its slot. */
    series(hostId: number, vmid: number, from: number, to: number, now: number, series: readonly (readonly [string, number])[]): MetricsAnswer {
      const fromS = Math.floor(from / 1000);
      const toS = Math.ceil(to / 1000);
      const tier = chooseTier(fromS, toS, Math.floor(now / 1000));
      const { step } = TIERS[tier];
      // Whole buckets: the one `from` falls in is included.
      const found = points(hostId, vmid, tier, fromS - (fromS % step), toS, series.map(([, slot]) => slot));
      const out: Record<string, MetricPoint[]> = {};
      series.forEach(([name], i) => {
        out[name] = found[i]!.map(([t, , avg, max]) => [t, round(avg), round(max)]);
      });
      return { step_s: step, from: isoMillis(from), to: isoMillis(to), series: out };
    },
  };
}

/** Seven significant digits: what a float32 bucket holds, without the noise of printing its binary tail. */
const round = (v: number) => (v === 0 ? 0 : Number(v.toPrecision(7)));
