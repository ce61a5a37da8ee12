import * as z from 'zod';
import { GUEST_SERIES, HOST_SERIES } from '../metrics.js';
import { shared } from './parts.js';

// The metric fields a heartbeat carries (inputs/hosts.ts holds the heartbeat), and the charts' query.

/**
 * A non-negative number, or its decimal text (a bash agent sends /proc's numbers as they are),
 * at most `max`. Anything else is a 400 naming the field: a bad number is never stored.
 */
const amount = (max: number, message: string) =>
  z.union([z.number(), z.string().regex(/^\d{1,20}(\.\d{1,20})?$/).transform(Number)], { error: message }).pipe(
    z
      .number({ error: message })
      .refine((v) => Number.isFinite(v) && v >= 0 && v <= max, { error: message }),
  );

// 2^60 bytes (an exabyte) is beyond any host; it keeps every value a safe double.
const BYTES_MAX = 2 ** 60;
const bytes = shared(() => amount(BYTES_MAX, 'must be a non-negative number of bytes'));
const ratio = shared(() => amount(1, 'must be a number from 0 to 1'));

/**
 * `metrics` of POST /api/agent/heartbeat: what a heartbeat may carry about the host itself (PRODUCT.md
 * "Metrics, alerts and notifications"); every field optional. cpu is 0–1 over the agent's last
 * interval, disk the root filesystem, net_rx_bytes and net_tx_bytes counters since boot (the server
 * charts their rate).
 */
export const HostMetrics = z.lazy(() =>
  z
    .object(
      {
        cpu: ratio().optional(),
        mem_used: bytes().optional(),
        mem_total: bytes().optional(),
        disk_used: bytes().optional(),
        disk_total: bytes().optional(),
        load1: amount(1_000_000, 'must be a non-negative number').optional(),
        net_rx_bytes: bytes().optional(),
        net_tx_bytes: bytes().optional(),
      },
      { error: 'must be an object' },
    )
    .optional(),
);
export type HostMetricsReport = NonNullable<z.input<typeof HostMetrics>>;
/** A report's numbers as the server holds them once read (decimal text turned into numbers): what the metric store takes. */
export type HostMetricsValues = NonNullable<z.output<typeof HostMetrics>>;

/**
 * The metric fields of one heartbeat guest (beside vmid, name, type, status), as
 * `pvesh get /nodes/<node>/qemu|lxc --output-format json` gives them; every field optional. netin and
 * netout are counters since the guest started (the server charts their rate).
 */
export const guestMetricFields = () => ({
  cpu: ratio().optional(),
  mem: bytes().optional(),
  maxmem: bytes().optional(),
  disk: bytes().optional(),
  maxdisk: bytes().optional(),
  uptime_s: amount(BYTES_MAX, 'must be a non-negative number of seconds').optional(),
  netin: bytes().optional(),
  netout: bytes().optional(),
});
type GuestMetrics = z.ZodObject<ReturnType<typeof guestMetricFields>>;
export type GuestMetricsReport = z.input<GuestMetrics>;
export type GuestMetricsValues = z.output<GuestMetrics>;

const isoTime = (field: string) =>
  z
    .string({ error: 'must be an ISO 8601 time' })
    .max(40, { error: 'must be an ISO 8601 time' })
    .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/, { error: `must be an ISO 8601 time such as 2026-11-22T10:15:00Z` })
    .transform((v, ctx) => {
      const ms = Date.parse(v);
      if (Number.isNaN(ms)) {
        ctx.addIssue({ code: 'custom', message: `${field} is not a valid time` });
        return z.NEVER;
      }
      return ms;
    });

const seriesList = (names: readonly string[]) =>
  z
    .string()
    .max(500)
    .transform((v, ctx) => {
      const list = [...new Set(v.split(',').map((s) => s.trim()).filter(Boolean))];
      const unknown = list.filter((s) => !names.includes(s));
      if (unknown.length || list.length === 0) {
        ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of ${names.join(', ')}` });
        return z.NEVER;
      }
      return list;
    });

const query = (names: readonly string[]) =>
  z.object({ from: isoTime('from').optional(), to: isoTime('to').optional(), series: seriesList(names).optional() }, { error: 'must be a query' });

/** GET /api/hosts/:id/metrics?from=&to= (ISO 8601, default the last hour) and series=cpu,mem_used (default all). */
export const HostMetricsQuery = z.lazy(() => query(HOST_SERIES));
/** GET /api/hosts/:id/guests/:vmid/metrics, as the host's. */
export const GuestMetricsQuery = z.lazy(() => query(GUEST_SERIES));
export type MetricsQuery = z.input<typeof HostMetricsQuery>;
/** The query as the server reads it: times in ms, the series as a list. */
export type MetricsRange = z.output<typeof HostMetricsQuery>;
