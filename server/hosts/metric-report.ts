import * as z from 'zod';
import type * as wire from '../contract/metrics.js';
import { shared, type Agrees, type Same } from '../http/validate.js';

// The metric fields a heartbeat carries, held here with the heartbeat's schema (schema.ts): the metric
// store takes the parsed values (wire.HostMetricsValues, wire.GuestMetricsValues) from services.ts.

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

/** `metrics` of POST /api/agent/heartbeat */
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
type _HostMetrics = Agrees<Same<z.input<typeof HostMetrics>, wire.HostMetricsReport | undefined>>;
type _HostValues = Agrees<Same<z.output<typeof HostMetrics>, wire.HostMetricsValues | undefined>>;

/** The metric fields of one heartbeat guest (beside vmid, name, type, status). */
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
const GuestMetrics = z.lazy(() => z.object(guestMetricFields()));
type _GuestMetrics = Agrees<Same<z.input<typeof GuestMetrics>, wire.GuestMetricsReport>>;
type _GuestValues = Agrees<Same<z.output<typeof GuestMetrics>, wire.GuestMetricsValues>>;
