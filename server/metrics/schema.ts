import * as z from 'zod';
import type * as wire from '../contract/metrics.js';
import { GUEST_SERIES, HOST_SERIES } from '../contract/metrics.js';
import type { Agrees, Same } from '../http/validate.js';

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

/** GET /api/hosts/:id/metrics */
export const HostMetricsQuery = z.lazy(() => query(HOST_SERIES));
/** GET /api/hosts/:id/guests/:vmid/metrics */
export const GuestMetricsQuery = z.lazy(() => query(GUEST_SERIES));
export type MetricsQuery = z.infer<typeof HostMetricsQuery>;
