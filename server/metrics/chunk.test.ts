import { describe, expect, it } from 'vitest';
import { decodeChunk, decodeSubject, encodeChunk } from './chunk.js';
import { decodeFrame, encodeFrame, foldSamples, mergeFrames, WIDTH, type Frame, type Sample } from './frame.js';

const GIB = 2 ** 30;
const host = (cpu: number, mem: number): Sample => [cpu, mem, 16 * GIB, 40 * GIB, 100 * GIB, 0.5, 1000, 2000];
const samples = (...entries: [number, Sample][]) => new Map(entries);
const slotOf = (f: Frame, vmid: number, slot: number) => {
  const o = f.vmids.indexOf(vmid) * WIDTH + slot * 3;
  return [f.values[o], f.values[o + 1], f.values[o + 2]];
};

describe('frames', () => {
  it('fold samples into n, average and maximum per slot, skipping what a sample lacks', () => {
    let f = foldSamples(undefined, samples([0, host(0.2, 4 * GIB)], [101, [0.5, undefined]]));
    f = foldSamples(f, samples([0, host(0.4, 6 * GIB)], [101, [0.1, 2 * GIB]], [102, [1]]));
    expect(f.vmids).toEqual([0, 101, 102]);
    expect(slotOf(f, 0, 0)).toEqual([2, expect.closeTo(0.3, 9), 0.4]);
    expect(slotOf(f, 0, 1)).toEqual([2, 5 * GIB, 6 * GIB]);
    expect(slotOf(f, 101, 0)).toEqual([2, expect.closeTo(0.3, 9), 0.5]);
    expect(slotOf(f, 101, 1)).toEqual([1, 2 * GIB, 2 * GIB]);
    expect(slotOf(f, 102, 0)).toEqual([1, 1, 1]);
  });

  it('merge finer buckets weighted by their counts', () => {
    const a = foldSamples(foldSamples(undefined, samples([0, [0.1]])), samples([0, [0.1]]));
    const b = foldSamples(undefined, samples([0, [0.7]], [5, [0.2]]));
    const m = mergeFrames([a, b])!;
    expect(slotOf(m, 0, 0)).toEqual([3, expect.closeTo(0.3, 9), 0.7]);
    expect(slotOf(m, 5, 0)).toEqual([1, 0.2, 0.2]);
    expect(mergeFrames([])).toBeUndefined();
  });

  it('round-trip through bytes at float32 precision', () => {
    const f = foldSamples(undefined, samples([0, host(0.123456, 5_123_456_789)], [4_000_000_000, [0.5]]));
    const back = decodeFrame(encodeFrame(f));
    expect(back.vmids).toEqual([0, 4_000_000_000]);
    back.values.forEach((v, i) => expect(v).toBeCloseTo(f.values[i]!, -3));
    expect(Math.abs(back.values[4]! - 5_123_456_789) / 5_123_456_789).toBeLessThan(1e-6);
  });

  it('read back from bytes at any offset in their buffer, as a row may come', () => {
    const bytes = encodeFrame(foldSamples(undefined, samples([0, host(0.123456, 5_123_456_789)], [101, [0.5, GIB]])));
    for (const offset of [1, 2, 3, 4]) {
      const shifted = Buffer.alloc(bytes.length + offset);
      bytes.copy(shifted, offset);
      expect(decodeFrame(shifted.subarray(offset))).toEqual(decodeFrame(bytes));
    }
  });
});

describe('chunks', () => {
  const frames = Array.from({ length: 60 }, (_, k) =>
    k % 7 === 3 ? undefined : foldSamples(undefined, samples([0, host(k / 100, (4 + k / 10) * GIB)], [100 + (k % 2), [k / 60, 1 * GIB, 2 * GIB]])),
  );

  it('give back every bucket within their units (1/10000 of a ratio, a KiB)', () => {
    const back = decodeChunk(encodeChunk(frames));
    expect(back).toHaveLength(60);
    back.forEach((f, k) => {
      if (!frames[k]) return expect(f).toBeUndefined();
      expect(f!.vmids).toEqual(frames[k]!.vmids);
      f!.values.forEach((v, i) => expect(Math.abs(v - frames[k]!.values[i]!)).toBeLessThanOrEqual(i % 3 === 0 ? 0 : Math.max(1e-4, 1024)));
    });
  });

  it('read one subject without the others', () => {
    const data = encodeChunk(frames);
    const cols = decodeSubject(data, 101)!;
    expect(cols).toHaveLength(WIDTH);
    expect(Array.from(cols[0]!).slice(0, 4)).toEqual([0, 1, 0, 0]);
    expect(cols[1]![1]).toBeCloseTo(1 / 60, 4);
    expect(decodeSubject(data, 999)).toBeUndefined();
  });

  it('are small where values repeat: an hour of 50 steady guests takes under 1/50 of its bucket rows', () => {
    const steady = Array.from({ length: 60 }, () => foldSamples(undefined, samples([0, host(0.25, 8 * GIB)], ...Array.from({ length: 50 }, (_, g) => [200 + g, [0.05, GIB, 2 * GIB, 3 * GIB, 8 * GIB, 100, 200]] as [number, Sample]))));
    const raw = steady.reduce((sum, f) => sum + encodeFrame(f).length, 0);
    expect(encodeChunk(steady).length).toBeLessThan(raw / 50);
  });
});
