import { liveEvent } from './events.js';

/** The series a host's chart can ask for: bytes, bytes per second (net_rx, net_tx), a 0–1 ratio (cpu), a load average. */
export const HOST_SERIES = ['cpu', 'mem_used', 'mem_total', 'disk_used', 'disk_total', 'load1', 'net_rx', 'net_tx'] as const;
export type HostSeries = (typeof HOST_SERIES)[number];
/** The series of a guest: `netin` and `netout` are rates (bytes per second). */
export const GUEST_SERIES = ['cpu', 'mem', 'maxmem', 'disk', 'maxdisk', 'netin', 'netout'] as const;
export type GuestSeries = (typeof GUEST_SERIES)[number];

/** One point: the bucket's start (Unix seconds), the average and the maximum of its samples. */
export type MetricPoint = [t: number, avg: number, max: number];

/** GET /api/hosts/:id/metrics and GET /api/hosts/:id/guests/:vmid/metrics */
export interface MetricsAnswer {
  step_s: number;
  from: string;
  to: string;
  series: Record<string, MetricPoint[]>;
}

/** A guest's last reported values (rates for netin/netout), as the host page's small figures show them. */
export interface GuestLatest {
  vmid: number;
  cpu: number | null;
  mem: number | null;
  maxmem: number | null;
  disk: number | null;
  maxdisk: number | null;
  uptime_s: number | null;
  netin: number | null;
  netout: number | null;
}

/** GET /api/hosts/:id/metrics/latest and the live `host.metrics` event: the last heartbeat's values. */
export interface HostMetricsLatest {
  host_id: number;
  at: string;
  host: Partial<Record<HostSeries, number>>;
  guests: GuestLatest[];
  /** The host's current 1-minute bucket after this heartbeat: [avg, max] per series, for a chart's last point. */
  bucket: { t: number; series: Partial<Record<HostSeries, [number, number]>> };
}

/** At most this many guests' numbers ride on a `host.metrics` event. */
export const LIVE_EVENT_GUESTS = 100;

/**
 * The live `host.metrics` event: the latest values, each guest's among them when the host reported
 * at most LIVE_EVENT_GUESTS. A larger host's event has `guests: []` and `guests_omitted: true`
 * (10,000 guests made 1.7 MB events that every stream had to take): read them from
 * GET /api/hosts/:id/metrics/latest.
 */
export interface HostMetricsEvent extends HostMetricsLatest {
  guests_omitted?: true;
}

export const metricsEvents = {
  'host.metrics': liveEvent<HostMetricsEvent>('fleet.read'),
};
