import * as z from 'zod';
import { idQuery, limitParam } from '../http/page-query.js';
import { ALERT_RULES, SEVERITIES } from '../contract/alerts.js';
import { CHANNEL_TYPES, type ChannelInput as WireChannelInput } from '../contract/notifications.js';
import { oneOf, shared } from '../http/validate.js';

const CONTROL = /[\u0000-\u001f\u007f]/;

/** An outbound URL: http or https only, no credentials in it (they belong in the secret fields). */
const httpUrl = shared(() =>
  z
    .string({ error: 'must be an http:// or https:// URL' })
    .max(2000, { error: 'must be at most 2000 characters' })
    .refine(
      (v) => {
        try {
          const u = new URL(v);
          return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && !CONTROL.test(v);
        } catch {
          return false;
        }
      },
      { error: 'must be an http:// or https:// URL' },
    )
    .refine((v) => !URL.canParse(v) || (new URL(v).username === '' && new URL(v).password === ''), { error: 'must not hold a user name or password' }),
);

/** A value sent in a header: a line break there would end the header and start another. */
const headerSecret = shared(() =>
  z
    .string({ error: 'must be a string' })
    .min(1, { error: 'must not be empty' })
    .max(1000, { error: 'must be at most 1000 characters' })
    .refine((v) => !CONTROL.test(v), { error: 'must not contain control characters (line breaks, tabs)' }),
);

const plain = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((v) => !CONTROL.test(v), { error: 'must not contain control characters' });

const address = shared(() => plain(320).refine((v) => /^[^\s@<>,;"]+@[^\s@<>,;"]+$/.test(v), { error: 'must be an e-mail address() such as ops@example.org' }));

/** Each channel type's config, as PRODUCT.md lists its fields. */
export const CHANNEL_CONFIGS = {
  webhook: z.lazy(() => z.object({ url: httpUrl(), secret: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).max(1000, { error: 'must be at most 1000 characters' }).optional() }, { error: 'must be an object' })),
  ntfy: z.lazy(() =>
    z.object(
      {
        server: httpUrl().default('https://ntfy.sh'),
        topic: z.string({ error: 'must be a topic name' }).regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, - or _' }),
        token: headerSecret().optional(),
      },
      { error: 'must be an object' },
    ),
  ),
  gotify: z.lazy(() => z.object({ server: httpUrl(), token: headerSecret() }, { error: 'must be an object' })),
  discord: z.lazy(() => z.object({ webhook_url: httpUrl() }, { error: 'must be an object' })),
  email: z.lazy(() =>
    z.object(
      {
        host: plain(253).refine((v) => /^[A-Za-z0-9.:[\]-]+$/.test(v), { error: 'must be a host name or address' }),
        port: z.int({ error: 'must be a port number' }).min(1, { error: 'must be a port number' }).max(65535, { error: 'must be a port number' }).default(587),
        secure: z.boolean({ error: 'must be true or false' }).default(false),
        user: plain(320).optional(),
        password: z.string({ error: 'must be a string' }).max(1000, { error: 'must be at most 1000 characters' }).optional(),
        // Without it a password goes only over TLS: `secure`, or STARTTLS that must succeed.
        allow_plaintext_password: z.boolean({ error: 'must be true or false' }).optional(),
        from: address(),
        to: plain(2000).refine((v) => v.split(',').every((a) => /^\s*[^\s@<>,;"]+@[^\s@<>,;"]+\s*$/.test(a)), { error: 'must be e-mail addresses separated by commas' }),
      },
      { error: 'must be an object' },
    ),
  ),
} as const;

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;

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
export type ChannelInput = z.infer<typeof ChannelInput>;

export const DeliveriesQuery = z.lazy(() =>
  z.object({
    limit: limitParam(100),
    channel_id: idQuery().optional(),
  }),
);
