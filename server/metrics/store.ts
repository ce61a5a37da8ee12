import { decodeChunk, decodeSubject } from './chunk.js';
import { decodeFrame, WIDTH, type Frame } from './frame.js';
import { chunkOf, TIERS, type Tier } from './keys.js';
import type { MetricRepo } from './repo.js';

/** One bucket of one series: its start (Unix seconds), sample count, average and maximum. */
export type Point = [t: number, n: number, avg: number, max: number];

/**
 * Reads stored buckets back, whether still a row or already sealed into a chunk. The last decoded
 * chunk is kept: a roll-up reads the same hour's chunk once for each of its quarters.
 */
export function createStoreReader(repo: MetricRepo) {
  let cached: { hostId: number; tier: Tier; start: number; frames: (Frame | undefined)[] } | undefined;

  function chunkFrames(hostId: number, tier: Tier, start: number, data: Buffer): (Frame | undefined)[] {
    if (cached && cached.hostId === hostId && cached.tier === tier && cached.start === start) return cached.frames;
    const frames = decodeChunk(data);
    cached = { hostId, tier, start, frames };
    return frames;
  }

  return {
    /** Drops the decoded chunk kept (a chunk was rewritten). */
    forget(): void {
      cached = undefined;
    },

    /** Every stored bucket of a host's tier with from <= t < to, oldest first. */
    frames(hostId: number, tier: Tier, from: number, to: number): { t: number; frame: Frame }[] {
      const step = TIERS[tier].step;
      const out: { t: number; frame: Frame }[] = [];
      for (const chunk of repo.chunks(hostId, tier, chunkOf(tier, from), to)) {
        chunkFrames(hostId, tier, chunk.t, chunk.data).forEach((frame, k) => {
          const t = chunk.t + k * step;
          if (frame && t >= from && t < to) out.push({ t, frame });
        });
      }
      for (const row of repo.buckets(hostId, tier, from, to)) out.push({ t: row.t, frame: decodeFrame(row.data) });
      return out.sort((a, b) => a.t - b.t);
    },

    /** One subject's points for each asked slot, oldest first; buckets without a sample of the slot are left out. */
    points(hostId: number, vmid: number, tier: Tier, from: number, to: number, slots: readonly number[]): Point[][] {
      const step = TIERS[tier].step;
      const out: Point[][] = slots.map(() => []);
      for (const chunk of repo.chunks(hostId, tier, chunkOf(tier, from), to)) {
        const columns = decodeSubject(chunk.data, vmid);
        if (!columns) continue;
        for (let k = 0; k < columns[0]!.length; k++) {
          const t = chunk.t + k * step;
          if (t < from || t >= to) continue;
          slots.forEach((slot, i) => {
            const n = columns[slot * 3]![k]!;
            if (n > 0) out[i]!.push([t, n, columns[slot * 3 + 1]![k]!, columns[slot * 3 + 2]![k]!]);
          });
        }
      }
      for (const row of repo.buckets(hostId, tier, from, to)) {
        const frame = decodeFrame(row.data);
        const at = frame.vmids.indexOf(vmid);
        if (at < 0) continue;
        slots.forEach((slot, i) => {
          const o = at * WIDTH + slot * 3;
          const n = frame.values[o]!;
          if (n > 0) out[i]!.push([row.t, n, frame.values[o + 1]!, frame.values[o + 2]!]);
        });
      }
      for (const list of out) list.sort((a, b) => a[0] - b[0]);
      return out;
    },
  };
}

export type StoreReader = ReturnType<typeof createStoreReader>;

/** Points of a finer tier gathered into buckets of `step`: averages weighted by counts, the largest maximum. */
export function coarsen(points: readonly Point[], step: number): Point[] {
  const out: Point[] = [];
  for (const [t, n, avg, max] of points) {
    const b = t - (t % step);
    const last = out.at(-1);
    if (last && last[0] === b) {
      last[2] = (last[2] * last[1] + avg * n) / (last[1] + n);
      last[3] = Math.max(last[3], max);
      last[1] += n;
    } else out.push([b, n, avg, max]);
  }
  return out;
}
