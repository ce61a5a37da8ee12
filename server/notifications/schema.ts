import * as z from 'zod';
import { CONTROL, plain } from '../contract/inputs/notifications.js';
import { shared } from '../http/validate.js';

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
