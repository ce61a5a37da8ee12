import type { GuestLatest, GuestMetricsValues as GuestMetrics, HostMetricsLatest, HostMetricsValues as HostMetrics, HostSeries } from '../contract/metrics.js';
import { HOST_SERIES } from '../contract/metrics.js';
import { isoMillis } from '../time.js';
import { decodeFrame, encodeFrame, foldSamples, WIDTH, type Sample } from './frame.js';
import { bucketOf } from './keys.js';
import type { MetricRepo } from './repo.js';

/** What a heartbeat hands the metric store: the host's numbers and each guest's. */
export interface MetricsReport {
  metrics?: HostMetrics;
  guests: readonly ({ vmid: number } & GuestMetrics)[];
}

/** The largest vmid a frame holds (a 32-bit field). */
const MAX_VMID = 2 ** 32 - 1;

/** Host ids above this do not fit the packed key (migration 0011): 131,071 enrolments. */
export const MAX_HOST_ID = 2 ** 17 - 1;

type Counters = [rx: number | undefined, tx: number | undefined];

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

/**
 * Folds a heartbeat's numbers into the host's current 1-minute bucket: one row read and one row
 * written, inside the heartbeat's own transaction. Counters become rates here, against the previous
 * reading kept in memory (after a restart the first heartbeat gives none). The last values are kept
 * for the Prometheus endpoint, the alerts and the host page.
 */
export function createIngest(repo: MetricRepo) {
  const previous = new Map<number, { at: number; host: Counters; guests: Map<number, Counters> }>();
  const latest = new Map<number, HostMetricsLatest>();

  return {
    latest: (hostId: number) => latest.get(hostId),

    /** Records one heartbeat (now in ms); returns what the live event tells, or undefined when it carried no numbers. */
    record(hostId: number, report: MetricsReport, now: number): HostMetricsLatest | undefined {
      if (hostId > MAX_HOST_ID) return undefined;
      const m = report.metrics;
      const before = previous.get(hostId);
      const counters = { at: now, host: [m?.net_rx_bytes, m?.net_tx_bytes] as Counters, guests: new Map<number, Counters>() };
      const samples = new Map<number, Sample>();
      const hostValues: Partial<Record<HostSeries, number>> = {};
      if (m) {
        const sample: Sample = [
          m.cpu, m.mem_used, m.mem_total, m.disk_used, m.disk_total, m.load1,
          rate(now, before?.host, before?.at, m.net_rx_bytes, 0), rate(now, before?.host, before?.at, m.net_tx_bytes, 1),
        ];
        if (sample.some((v) => v !== undefined)) samples.set(0, sample);
        HOST_SERIES.forEach((name, slot) => {
          if (sample[slot] !== undefined) hostValues[name] = sample[slot];
        });
      }
      const guests: GuestLatest[] = [];
      for (const g of report.guests) {
        // A frame stores vmids as 32-bit numbers; Proxmox's go to 999,999,999, a larger one is not a guest's.
        if (g.vmid > MAX_VMID) continue;
        const keys = [g.cpu, g.mem, g.maxmem, g.disk, g.maxdisk, g.uptime_s, g.netin, g.netout];
        if (keys.every((v) => v === undefined)) continue;
        counters.guests.set(g.vmid, [g.netin, g.netout]);
        const old = before?.guests.get(g.vmid);
        const netin = rate(now, old, before?.at, g.netin, 0);
        const netout = rate(now, old, before?.at, g.netout, 1);
        samples.set(g.vmid, [g.cpu, g.mem, g.maxmem, g.disk, g.maxdisk, netin, netout]);
        guests.push({
          vmid: g.vmid, cpu: g.cpu ?? null, mem: g.mem ?? null, maxmem: g.maxmem ?? null, disk: g.disk ?? null, maxdisk: g.maxdisk ?? null,
          uptime_s: g.uptime_s ?? null, netin: netin ?? null, netout: netout ?? null,
        });
      }
      previous.set(hostId, counters);
      if (samples.size === 0) return undefined;

      const t = bucketOf(0, Math.floor(now / 1000));
      const row = repo.bucket(hostId, 0, t);
      const frame = foldSamples(row ? decodeFrame(row) : undefined, samples);
      repo.putBucket(hostId, 0, t, encodeFrame(frame));

      const bucket: Partial<Record<HostSeries, [number, number]>> = {};
      const at = frame.vmids.indexOf(0);
      if (at >= 0) {
        HOST_SERIES.forEach((name, slot) => {
          const o = at * WIDTH + slot * 3;
          if (frame.values[o]! > 0) bucket[name] = [frame.values[o + 1]!, frame.values[o + 2]!];
        });
      }
      const value: HostMetricsLatest = { host_id: hostId, at: isoMillis(now), host: hostValues, guests, bucket: { t, series: bucket } };
      latest.set(hostId, value);
      return value;
    },
  };
}

export type Ingest = ReturnType<typeof createIngest>;
