import * as z from 'zod';
import { SEVERITIES } from '../alerts.js';
import { limitParam } from './page.js';
import { oneOf } from './parts.js';

/** PUT /api/alerts/rules/:rule: any of the rule's settings; whether the rule has `percent` or `days` (a threshold it lacks is refused) is checked by the service. */
export const RuleUpdate = z.lazy(() =>
  z
    .object(
      {
        enabled: z.boolean({ error: 'must be true or false' }).optional(),
        severity: oneOf(SEVERITIES).optional(),
        for_s: z.int({ error: 'must be a whole number of seconds' }).min(0, { error: 'must be at least 0' }).max(30 * 86_400, { error: 'must be at most 2592000 (30 days)' }).optional(),
        percent: z.number({ error: 'must be a number from 1 to 100' }).min(1, { error: 'must be a number from 1 to 100' }).max(100, { error: 'must be a number from 1 to 100' }).optional(),
        days: z.int({ error: 'must be a whole number of days' }).min(1, { error: 'must be from 1 to 365' }).max(365, { error: 'must be from 1 to 365' }).optional(),
      },
      { error: 'must be a JSON object' },
    )
    .strict(),
);
export type AlertRuleUpdate = z.output<typeof RuleUpdate>;

/** GET /api/alerts?status=&limit= */
export const AlertsQuery = z.lazy(() =>
  z.object({
    status: z.enum(['firing', 'resolved'], { error: 'must be firing or resolved' }).optional(),
    limit: limitParam(100),
  }),
);
/** As a client sends it (limit 1 to 1000, 100 when absent). */
export type AlertsQuery = z.input<typeof AlertsQuery>;
