import * as z from 'zod';
import { ALERT_RULES, SEVERITIES } from '../alerts.js';
import { CHANNEL_TYPES } from '../channel-types.js';
import { idQuery, limitParam } from './page.js';
import { oneOf } from './parts.js';

/** C0 controls and DEL: none belongs in a name, an address or a header value. */
export const CONTROL = /[\u0000-\u001f\u007f]/;

/** A non-empty text of at most `max` characters, trimmed, without control characters. */
export const plain = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((v) => !CONTROL.test(v), { error: 'must not contain control characters' });

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

/**
 * start and end are HH:MM, local time in `timezone` (an IANA name, e.g. Europe/Berlin); a window may
 * run past midnight (22:00–07:00).
 */
export const QuietHours = z.lazy(() =>
  z
    .object(
      {
        start: z.string({ error: 'must be a time HH:MM' }).regex(HHMM, { error: 'must be a time HH:MM' }),
        end: z.string({ error: 'must be a time HH:MM' }).regex(HHMM, { error: 'must be a time HH:MM' }),
        timezone: z
          .string({ error: 'must be an IANA time zone such as Europe/Berlin' })
          .max(64)
          .refine(
            (tz) => {
              try {
                new Intl.DateTimeFormat('en', { timeZone: tz });
                return true;
              } catch {
                return false;
              }
            },
            { error: 'must be an IANA time zone such as Europe/Berlin' },
          ),
      },
      { error: 'must be an object {start, end, timezone}' },
    )
    .refine((q) => q.start !== q.end, { error: 'start and end must differ', path: ['end'] }),
);
export type QuietHours = z.output<typeof QuietHours>;

/** POST /api/notifications/channels, PUT …/:id: `config` is checked against the type's schema by the service (after stored secrets are put back). */
export const ChannelInput = z.lazy(() =>
  z.object(
    {
      name: plain(100),
      type: oneOf(CHANNEL_TYPES),
      config: z.record(z.string(), z.unknown(), { error: 'must be an object' }),
      rules: z.union([z.literal('all'), z.array(oneOf(ALERT_RULES), { error: `must be "all" or a list of rules` }).max(ALERT_RULES.length)], {
        error: `must be "all" or a list of rules (${ALERT_RULES.join(', ')})`,
      }),
      min_severity: oneOf(SEVERITIES).default('info'),
      quiet_hours: QuietHours.nullable().optional(),
    },
    { error: 'must be a JSON object' },
  ),
);
export type ChannelInput = z.output<typeof ChannelInput>;

/** GET /api/notifications/deliveries?limit= (default 100, at most 1000)&channel_id= */
export const DeliveriesQuery = z.lazy(() =>
  z.object({
    limit: limitParam(100),
    channel_id: idQuery().optional(),
  }),
);
export type DeliveriesQuery = z.input<typeof DeliveriesQuery>;
