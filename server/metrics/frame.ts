/**
 * A frame: one host's metric bucket at one resolution, every subject in it (vmid 0 is the host,
 * any other vmid a guest), each with 8 series slots of (n, avg, max). Frames are what a heartbeat
 * folds its samples into, what roll-ups merge, and what chunks pack.
 */

/** Series slots per subject: the host's and a guest's series in the order of HOST_SERIES / GUEST_SERIES. */
export const SLOTS = 8;
/** Numbers per subject: n, avg, max for each slot. */
export const WIDTH = SLOTS * 3;

export interface Frame {
  vmids: number[];
  /** values[i * WIDTH + slot * 3 + 0 | 1 | 2] = n, avg, max of subject i's slot. */
  values: Float64Array;
}

/** One heartbeat's value per slot for one subject; undefined where the agent sent nothing. */
export type Sample = (number | undefined)[];

/** Folds samples into a frame (a copy when subjects are added): n counts them, avg is their mean, max their maximum. */
export function foldSamples(frame: Frame | undefined, samples: ReadonlyMap<number, Sample>): Frame {
  const vmids = [...samples.keys()];
  const packed = new Float64Array(vmids.length * SLOTS).fill(NaN);
  let j = 0;
  for (const sample of samples.values()) {
    sample.forEach((v, slot) => {
      if (v !== undefined) packed[j * SLOTS + slot] = v;
    });
    j++;
  }
  const into = frame ? { vmids: [...frame.vmids], values: frame.values } : { vmids: [], values: new Float64Array(0) };
  return foldPacked(into, indexOf(into), vmids, packed);
}

/** Where each subject of a frame is: vmid to its index. */
export const indexOf = (frame: Frame): Map<number, number> => new Map(frame.vmids.map((v, i) => [v, i]));

/**
 * foldSamples for samples packed as a heartbeat makes them (`samples[j * SLOTS + slot]` is subject
 * `vmids[j]`'s, NaN where it sent none), into `frame` itself: its vmids and `at` (its index) gain the
 * new subjects, and the frame returned has its values, grown when subjects were added.
 */
export function foldPacked(frame: Frame, at: Map<number, number>, vmids: readonly number[], samples: Float64Array): Frame {
  for (const vmid of vmids) if (!at.has(vmid)) at.set(vmid, frame.vmids.push(vmid) - 1);
  let values = frame.values;
  if (values.length !== frame.vmids.length * WIDTH) {
    values = new Float64Array(frame.vmids.length * WIDTH);
    values.set(frame.values);
  }
  for (let j = 0; j < vmids.length; j++) {
    const base = at.get(vmids[j]!)! * WIDTH;
    for (let slot = 0; slot < SLOTS; slot++) {
      const v = samples[j * SLOTS + slot]!;
      if (!Number.isFinite(v)) continue;
      const o = base + slot * 3;
      const n = values[o]!;
      values[o + 1] = n === 0 ? v : (values[o + 1]! * n + v) / (n + 1);
      values[o + 2] = n === 0 ? v : Math.max(values[o + 2]!, v);
      values[o] = n + 1;
    }
  }
  return { vmids: frame.vmids, values };
}

/** Frames of finer buckets as one coarser bucket: averages weighted by their counts, the largest maximum. */
export function mergeFrames(frames: readonly Frame[]): Frame | undefined {
  if (frames.length === 0) return undefined;
  const vmids: number[] = [];
  const at = new Map<number, number>();
  for (const f of frames) for (const v of f.vmids) if (!at.has(v)) at.set(v, vmids.push(v) - 1);
  const values = new Float64Array(vmids.length * WIDTH);
  for (const f of frames) {
    f.vmids.forEach((vmid, i) => {
      const to = at.get(vmid)! * WIDTH;
      const from = i * WIDTH;
      for (let slot = 0; slot < SLOTS; slot++) {
        const a = to + slot * 3;
        const b = from + slot * 3;
        const nb = f.values[b]!;
        if (nb === 0) continue;
        const na = values[a]!;
        values[a + 1] = na === 0 ? f.values[b + 1]! : (values[a + 1]! * na + f.values[b + 1]! * nb) / (na + nb);
        values[a + 2] = na === 0 ? f.values[b + 2]! : Math.max(values[a + 2]!, f.values[b + 2]!);
        values[a] = na + nb;
      }
    });
  }
  return { vmids, values };
}

/**
 * A bucket row's bytes: the subject count, the vmids (u32) and every number as a float32 (7
 * significant digits: a chart's precision). Little-endian, as read back by decodeFrame.
 */
export function encodeFrame(frame: Frame): Buffer {
  const count = frame.vmids.length;
  const buffer = Buffer.allocUnsafe(4 + count * 4 + count * WIDTH * 4);
  buffer.writeUInt32LE(count, 0);
  for (let i = 0; i < count; i++) buffer.writeUInt32LE(frame.vmids[i]!, 4 + i * 4);
  const floats = new Float32Array(buffer.buffer, buffer.byteOffset + 4 + count * 4, count * WIDTH);
  floats.set(frame.values);
  return buffer;
}

/** Rounds a frame's numbers, in place, to what decodeFrame reads back from encodeFrame's bytes. */
export function roundAsStored(frame: Frame): void {
  const values = frame.values;
  for (let i = 0; i < values.length; i++) values[i] = Math.fround(values[i]!);
}

export function decodeFrame(buffer: Uint8Array): Frame {
  const view = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const count = view.readUInt32LE(0);
  const vmids = new Array<number>(count);
  for (let i = 0; i < count; i++) vmids[i] = view.readUInt32LE(4 + i * 4);
  const values = new Float64Array(count * WIDTH);
  const start = view.byteOffset + 4 + count * 4;
  // The floats as one array rather than a read each (a large host's bucket holds 240,000): a view
  // where the row's bytes are aligned for it, else a copy that is.
  const floats = start % 4 === 0 ? view.buffer : view.buffer.slice(start, start + values.length * 4);
  values.set(new Float32Array(floats, start % 4 === 0 ? start : 0, values.length));
  return { vmids, values };
}
