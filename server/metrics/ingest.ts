import type { GuestMetricsValues as GuestMetrics, HostMetricsValues as HostMetrics } from '../contract/inputs/metrics.js';
import type { GuestLatest, HostMetricsLatest, HostSeries } from '../contract/metrics.js';
import { HOST_SERIES } from '../contract/metrics.js';
import { isoMillis } from '../time.js';
import { decodeFrame, encodeFrame, foldPacked, indexOf, roundAsStored, SLOTS, WIDTH, type Frame } from './frame.js';
import { bucketOf } from './keys.js';
import type { MetricRepo } from './repo.js';
import { nextTurn } from '../tasks.js';

/** What a heartbeat hands the metric store: the host's numbers and each guest's. */
export interface MetricsReport {
  metrics?: HostMetrics;
  guests: readonly ({ vmid: number } & GuestMetrics)[];
}

/** The largest vmid a frame holds (a 32-bit field). */
const MAX_VMID = 2 ** 32 - 1;

/** Host ids above this do not fit the packed key (migration 0011): 131,071 enrolments. */
export const MAX_HOST_ID = 2 ** 17 - 1;

/** Guests made ready per turn of the event loop when a heartbeat is prepared ahead of its transaction. */
const GUESTS_PER_TURN = 1000;

type Counters = [rx: number | undefined, tx: number | undefined];
type Readings = { at: number; host: Counters; guests: Map<number, Counters> };

/**
 * Per second since the last heartbeat, from two counter readings; nothing across a reset (a reboot
 * starts the counters again) or a long gap, where a rate would be a guess.
 */
function rate(now: number, before: Counters | undefined, beforeAt: number | undefined, current: number | undefined, which: 0 | 1): number | undefined {
  if (current === undefined || before === undefined || beforeAt === undefined) return undefined;
  const previous = before[which];
  const seconds = (now - beforeAt) / 1000;
  if (previous === undefined || current < previous || seconds <= 0 || seconds > 3600) return undefined;
  return (current - previous) / seconds;
}

/** A heartbeat's numbers as its bucket takes them, worked out against the readings `before`. */
interface Prepared {
  hostId: number;
  report: MetricsReport;
  now: number;
  before: Readings | undefined;
  counters: Readings;
  hostValues: Partial<Record<HostSeries, number>>;
  guests: GuestLatest[];
  /** Subjects with a sample (0 the host), and their samples packed for foldPacked. */
  vmids: number[];
  samples: Float64Array;
  /** Where each vmid's sample is in `samples`: a vmid listed twice keeps its last. */
  slot: Map<number, number>;
}

/** The host's current 1-minute bucket as this process last wrote it: its bytes and its frame. */
interface Kept {
  t: number;
  bytes: Buffer;
  frame: Frame;
  at: Map<number, number>;
}

/**
 * Folds a heartbeat's numbers into the host's current 1-minute bucket: one row read and one row
 * written, inside the heartbeat's own transaction. Counters become rates here, against the previous
 * reading kept in memory (after a restart the first heartbeat gives none). The last values are kept
 * for the Prometheus endpoint, the alerts and the host page.
 *
 * A heartbeat of 10,000 guests is prepared ahead of its transaction, a slice of guests per turn
 * (`prepare`), so that the transaction itself only folds packed numbers into the bucket. The bucket
 * last written is kept decoded, and used while its row holds exactly the bytes written: a transaction
 * that rolled back leaves other bytes there, and the row is decoded again.
 */
export function createIngest(repo: MetricRepo) {
  const previous = new Map<number, Readings>();
  const latest = new Map<number, HostMetricsLatest>();
  const kept = new Map<number, Kept>();

  function start(hostId: number, report: MetricsReport, now: number): Prepared {
    const before = previous.get(hostId);
    const m = report.metrics;
    const size = report.guests.length + 1;
    const p: Prepared = {
      hostId, report, now, before,
      counters: { at: now, host: [m?.net_rx_bytes, m?.net_tx_bytes], guests: new Map() },
      hostValues: {}, guests: [], vmids: [], samples: new Float64Array(size * SLOTS).fill(NaN), slot: new Map(),
    };
    if (m) {
      const sample = [
        m.cpu, m.mem_used, m.mem_total, m.disk_used, m.disk_total, m.load1,
        rate(now, before?.host, before?.at, m.net_rx_bytes, 0), rate(now, before?.host, before?.at, m.net_tx_bytes, 1),
      ];
      if (sample.some((v) => v !== undefined)) put(p, 0, sample);
      HOST_SERIES.forEach((name, slot) => {
        if (sample[slot] !== undefined) p.hostValues[name] = sample[slot];
      });
    }
    return p;
  }

  function put(p: Prepared, vmid: number, sample: (number | undefined)[]): void {
    let j = p.slot.get(vmid);
    if (j === undefined) p.slot.set(vmid, (j = p.vmids.push(vmid) - 1));
    for (let slot = 0; slot < sample.length; slot++) p.samples[j * SLOTS + slot] = sample[slot] ?? NaN;
  }

  function addGuests(p: Prepared, from: number, to: number): void {
    const { now, before } = p;
    for (let i = from; i < to; i++) {
      const g = p.report.guests[i]!;
      // A frame stores vmids as 32-bit numbers; Proxmox's go to 999,999,999, a larger one is not a guest's.
      if (g.vmid > MAX_VMID) continue;
      const keys = [g.cpu, g.mem, g.maxmem, g.disk, g.maxdisk, g.uptime_s, g.netin, g.netout];
      if (keys.every((v) => v === undefined)) continue;
      p.counters.guests.set(g.vmid, [g.netin, g.netout]);
      const old = before?.guests.get(g.vmid);
      const netin = rate(now, old, before?.at, g.netin, 0);
      const netout = rate(now, old, before?.at, g.netout, 1);
      put(p, g.vmid, [g.cpu, g.mem, g.maxmem, g.disk, g.maxdisk, netin, netout]);
      p.guests.push({
        vmid: g.vmid, cpu: g.cpu ?? null, mem: g.mem ?? null, maxmem: g.maxmem ?? null, disk: g.disk ?? null, maxdisk: g.maxdisk ?? null,
        uptime_s: g.uptime_s ?? null, netin: netin ?? null, netout: netout ?? null,
      });
    }
  }

  function prepareNow(hostId: number, report: MetricsReport, now: number): Prepared {
    const p = start(hostId, report, now);
    addGuests(p, 0, report.guests.length);
    return p;
  }

  /** The host's current bucket, decoded again unless the row holds what was last written to it. */
  function bucketAt(hostId: number, t: number): Kept {
    const row = repo.bucket(hostId, 0, t);
    const last = kept.get(hostId);
    // Dropped while it is changed: a fold that throws half-way must not be taken for the row's content.
    kept.delete(hostId);
    if (last && last.t === t && row && row.equals(last.bytes)) return last;
    const frame = row ? decodeFrame(row) : { vmids: [], values: new Float64Array(0) };
    return { t, bytes: row ?? Buffer.alloc(0), frame, at: indexOf(frame) };
  }

  function commit(prepared: Prepared): HostMetricsLatest | undefined {
    const { hostId, now } = prepared;
    // Another heartbeat of the host came in between: rates against its readings.
    const p = previous.get(hostId) === prepared.before ? prepared : prepareNow(hostId, prepared.report, now);
    previous.set(hostId, p.counters);
    if (p.vmids.length === 0) return undefined;

    const t = bucketOf(0, Math.floor(now / 1000));
    const bucketKept = bucketAt(hostId, t);
    const frame = foldPacked(bucketKept.frame, bucketKept.at, p.vmids, p.samples);
    const bucket: Partial<Record<HostSeries, [number, number]>> = {};
    const at = bucketKept.at.get(0);
    if (at !== undefined) {
      HOST_SERIES.forEach((name, slot) => {
        const o = at * WIDTH + slot * 3;
        if (frame.values[o]! > 0) bucket[name] = [frame.values[o + 1]!, frame.values[o + 2]!];
      });
    }
    const bytes = encodeFrame(frame);
    repo.putBucket(hostId, 0, t, bytes);
    // What the next heartbeat would read back from the row.
    roundAsStored(frame);
    kept.set(hostId, { t, bytes, frame, at: bucketKept.at });

    const value: HostMetricsLatest = { host_id: hostId, at: isoMillis(now), host: p.hostValues, guests: p.guests, bucket: { t, series: bucket } };
    latest.set(hostId, value);
    return value;
  }

  return {
    latest: (hostId: number) => latest.get(hostId),

    /** Records one heartbeat (now in ms); returns what the live event tells, or undefined when it carried no numbers. */
    record(hostId: number, report: MetricsReport, now: number): HostMetricsLatest | undefined {
      if (hostId > MAX_HOST_ID) return undefined;
      return commit(prepareNow(hostId, report, now));
    },

    /**
     * `record` in two steps: the guests' numbers made ready a slice per turn, then (the function it
     * resolves to, inside the heartbeat's transaction) folded into the bucket.
     */
    async prepare(hostId: number, report: MetricsReport, now: number): Promise<() => HostMetricsLatest | undefined> {
      if (hostId > MAX_HOST_ID) return () => undefined;
      const p = start(hostId, report, now);
      for (let from = 0; from < report.guests.length; from += GUESTS_PER_TURN) {
        if (from > 0) await nextTurn();
        addGuests(p, from, Math.min(from + GUESTS_PER_TURN, report.guests.length));
      }
      return () => commit(p);
    },
  };
}

export type Ingest = ReturnType<typeof createIngest>;
