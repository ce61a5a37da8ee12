import { SLOTS, WIDTH, type Frame } from './frame.js';

/** node:zlib, loaded when a chunk is first sealed or read rather than at every start (~1 ms of it). */
const zlib = () => process.getBuiltinModule('node:zlib');

/**
 * A sealed span of one host's buckets, packed for years of keeping: per subject, each of its
 * columns (n, avg, max of every slot) across the span's buckets as integers, delta-encoded varints,
 * deflated; one block per subject so a chart of one guest inflates only that guest's block.
 * Integers: cpu in 1/10000, bytes in KiB, load in 1/100, rates in bytes per second; a chart needs no finer.
 */

const VERSION = 1;
const KIB = 1 / 1024;
const HOST_SCALE = [10_000, KIB, KIB, KIB, KIB, 100, 1, 1];
const GUEST_SCALE = [10_000, KIB, KIB, KIB, KIB, 1, 1, 1];
const scaleOf = (vmid: number, slot: number) => (vmid === 0 ? HOST_SCALE : GUEST_SCALE)[slot]!;

class Writer {
  bytes: number[] = [];
  uint(v: number): void {
    while (v >= 128) {
      this.bytes.push((v % 128) + 128);
      v = Math.floor(v / 128);
    }
    this.bytes.push(v);
  }
  /** Zigzag: small differences either way are small numbers. */
  int(v: number): void {
    this.uint(v >= 0 ? v * 2 : -v * 2 - 1);
  }
}

class Reader {
  constructor(
    private readonly bytes: Uint8Array,
    public at = 0,
  ) {}
  uint(): number {
    let v = 0;
    let scale = 1;
    for (;;) {
      if (this.at >= this.bytes.length) throw new Error('metric chunk is truncated');
      const b = this.bytes[this.at++]!;
      v += (b & 127) * scale;
      if (b < 128) return v;
      scale *= 128;
    }
  }
  int(): number {
    const z = this.uint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }
}

/** Packs `frames` (index k = the span's k-th bucket; undefined where nothing was reported). */
export function encodeChunk(frames: readonly (Frame | undefined)[]): Buffer {
  const buckets = frames.length;
  const vmids: number[] = [];
  const seen = new Set<number>();
  for (const f of frames) for (const v of f?.vmids ?? []) if (!seen.has(v)) seen.add(v), vmids.push(v);
  const index = frames.map((f) => (f ? new Map(f.vmids.map((v, i) => [v, i])) : undefined));
  const head = new Writer();
  head.uint(VERSION);
  head.uint(buckets);
  head.uint(vmids.length);
  const blocks: Buffer[] = [];
  for (const vmid of vmids) {
    const w = new Writer();
    for (let col = 0; col < WIDTH; col++) {
      const slot = Math.floor(col / 3);
      const scale = col % 3 === 0 ? 1 : scaleOf(vmid, slot);
      let previous = 0;
      for (let k = 0; k < buckets; k++) {
        const i = index[k]?.get(vmid);
        const n = i === undefined ? 0 : frames[k]!.values[i * WIDTH + slot * 3]!;
        // A bucket without samples repeats the value before it: a zero difference costs least.
        const q = i === undefined || (col % 3 !== 0 && n === 0) ? (col % 3 === 0 ? 0 : previous) : Math.round(frames[k]!.values[i * WIDTH + col]! * scale);
        w.int(q - previous);
        previous = q;
      }
    }
    const block = zlib().deflateRawSync(Buffer.from(w.bytes));
    head.uint(vmid);
    head.uint(block.length);
    blocks.push(block);
  }
  return Buffer.concat([Buffer.from(head.bytes), ...blocks]);
}

interface Directory {
  buckets: number;
  subjects: { vmid: number; start: number; length: number }[];
}

function directory(data: Uint8Array): Directory {
  const r = new Reader(data);
  if (r.uint() !== VERSION) throw new Error('unknown metric chunk version');
  const buckets = r.uint();
  const count = r.uint();
  const entries: { vmid: number; length: number }[] = [];
  for (let i = 0; i < count; i++) entries.push({ vmid: r.uint(), length: r.uint() });
  let start = r.at;
  return {
    buckets,
    subjects: entries.map((e) => {
      const s = { ...e, start };
      start += e.length;
      return s;
    }),
  };
}

/** One subject's columns: columns[col][k], in the frame's units again. */
function readBlock(data: Uint8Array, vmid: number, start: number, length: number, buckets: number): Float64Array[] {
  const r = new Reader(zlib().inflateRawSync(data.subarray(start, start + length)));
  const columns: Float64Array[] = [];
  for (let col = 0; col < WIDTH; col++) {
    const scale = col % 3 === 0 ? 1 : scaleOf(vmid, Math.floor(col / 3));
    const column = new Float64Array(buckets);
    let q = 0;
    for (let k = 0; k < buckets; k++) {
      q += r.int();
      column[k] = q / scale;
    }
    columns.push(column);
  }
  return columns;
}

/** Every bucket of a chunk as frames again (undefined where no subject had a sample). */
export function decodeChunk(data: Uint8Array): (Frame | undefined)[] {
  const dir = directory(data);
  const blocks = dir.subjects.map((s) => readBlock(data, s.vmid, s.start, s.length, dir.buckets));
  const frames: (Frame | undefined)[] = [];
  for (let k = 0; k < dir.buckets; k++) {
    const present = dir.subjects.map((_, i) => i).filter((i) => {
      for (let slot = 0; slot < SLOTS; slot++) if (blocks[i]![slot * 3]![k]! > 0) return true;
      return false;
    });
    if (present.length === 0) {
      frames.push(undefined);
      continue;
    }
    const values = new Float64Array(present.length * WIDTH);
    present.forEach((i, j) => {
      for (let col = 0; col < WIDTH; col++) values[j * WIDTH + col] = blocks[i]![col]![k]!;
    });
    frames.push({ vmids: present.map((i) => dir.subjects[i]!.vmid), values });
  }
  return frames;
}

/** One subject's columns of a chunk (columns[slot * 3 + 0|1|2][k] = n, avg, max), or undefined when it has none. */
export function decodeSubject(data: Uint8Array, vmid: number): Float64Array[] | undefined {
  const dir = directory(data);
  const s = dir.subjects.find((e) => e.vmid === vmid);
  return s && readBlock(data, vmid, s.start, s.length, dir.buckets);
}
