import * as z from 'zod';
import type * as wire from '../contract/signin.js';
import { isPlainObject, shared } from '../http/validate.js';

// The wire types are written once, in server/contract/signin.ts; the schemas below are checked against them.

/** Six digits; spaces (as apps show them, "123 456") are dropped. */
const Code = shared(() =>
  z
    .string({ error: 'must be the 6-digit code from the authenticator app' })
    .max(20, 'must be the 6-digit code from the authenticator app')
    .transform((v) => v.replace(/\s+/g, ''))
    .pipe(z.string().regex(/^\d{6}$/, 'must be the 6-digit code from the authenticator app')),
);

export const TotpConfirmBody = z.lazy(() => z.object({ code: Code() }));

export const TotpRemoveBody = z.lazy(() => z.object({ password: z.string({ error: 'is required' }).max(1024, 'is too long') }));

export const TotpLoginBody = z.lazy(() =>
  z
    .object({
      code: Code().optional(),
      recovery_code: z.string({ error: 'must be text' }).max(64, 'is not a recovery code').optional(),
    })
    .refine((b) => (b.code === undefined) !== (b.recovery_code === undefined), { error: 'send either code or recovery_code', path: ['code'] }),
);

const PasskeyName = shared(() =>
  z
    .string({ error: 'is required' })
    .trim()
    .min(1, 'is required')
    .max(60, 'must be at most 60 characters')
    .refine((v) => !/[\x00-\x1f\x7f]/.test(v), 'must not contain control characters'),
);

/** What the browser's WebAuthn call answered: an object the library checks in full; here only its outline. */
const WebAuthnResponse = shared(() =>
  z.custom<Record<string, unknown>>(
    (v) => isPlainObject(v) && typeof v.id === 'string' && v.id.length <= 1024 && isPlainObject(v.response) && v.type === 'public-key',
    { error: 'must be the answer of the browser’s passkey prompt' },
  ),
);

export const PasskeyRegistrationBody = z.lazy(() => z.object({ name: PasskeyName(), response: WebAuthnResponse() }));

export const PasskeyRenameBody = z.lazy(() => z.object({ name: PasskeyName() }));

export const PasskeySignInBody = z.lazy(() => z.object({ response: WebAuthnResponse() }));

export const PasskeyProofBody = z.lazy(() =>
  z
    .object({
      password: z.string({ error: 'must be text' }).max(1024, 'is too long').optional(),
      code: Code().optional(),
    })
    .refine((b) => b.password === undefined || b.code === undefined, { error: 'send either password or code', path: ['code'] }),
);

export const OidcStartQuery = z.lazy(() => z.object({ next: z.string().optional() }));
