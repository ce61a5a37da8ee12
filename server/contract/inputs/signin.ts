import * as z from 'zod';
import { isPlainObject, shared } from './parts.js';

/** Six digits; spaces (as apps show them, "123 456") are dropped. */
const Code = shared(() =>
  z
    .string({ error: 'must be the 6-digit code from the authenticator app' })
    .max(20, 'must be the 6-digit code from the authenticator app')
    .transform((v) => v.replace(/\s+/g, ''))
    .pipe(z.string().regex(/^\d{6}$/, 'must be the 6-digit code from the authenticator app')),
);

/** POST /api/auth/totp/confirm: the first code from the app turns the factor on. */
export const TotpConfirmBody = z.lazy(() => z.object({ code: Code() }));
export type TotpConfirm = z.output<typeof TotpConfirmBody>;

/** DELETE /api/auth/totp. */
export const TotpRemoveBody = z.lazy(() => z.object({ password: z.string({ error: 'is required' }).max(1024, 'is too long') }));
export type TotpRemove = z.output<typeof TotpRemoveBody>;

/** POST /api/auth/login/totp: one of the two. */
export const TotpLoginBody = z.lazy(() =>
  z
    .object({
      code: Code().optional(),
      recovery_code: z.string({ error: 'must be text' }).max(64, 'is not a recovery code').optional(),
    })
    .refine((b) => (b.code === undefined) !== (b.recovery_code === undefined), { error: 'send either code or recovery_code', path: ['code'] }),
);
export type TotpLogin = z.output<typeof TotpLoginBody>;

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

/** POST /api/auth/passkeys/register/verify: what the browser's navigator.credentials.create() answered, and a name for it. */
export const PasskeyRegistrationBody = z.lazy(() => z.object({ name: PasskeyName(), response: WebAuthnResponse() }));
export type PasskeyRegistration = z.output<typeof PasskeyRegistrationBody>;

/** PATCH /api/auth/passkeys/:id. */
export const PasskeyRenameBody = z.lazy(() => z.object({ name: PasskeyName() }));
export type PasskeyRename = z.output<typeof PasskeyRenameBody>;

/** POST /api/auth/passkeys/verify and POST /api/auth/login/passkey: what navigator.credentials.get() answered. */
export const PasskeySignInBody = z.lazy(() => z.object({ response: WebAuthnResponse() }));
export type PasskeySignIn = z.output<typeof PasskeySignInBody>;

/**
 * POST /api/auth/passkeys/register/options: adding a passkey needs the password, or a current code of
 * the authenticator app, so a stolen session cannot add one (an account that signs in through single
 * sign-on and has neither may send nothing within 5 minutes of signing in).
 */
export const PasskeyProofBody = z.lazy(() =>
  z
    .object({
      password: z.string({ error: 'must be text' }).max(1024, 'is too long').optional(),
      code: Code().optional(),
    })
    .refine((b) => b.password === undefined || b.code === undefined, { error: 'send either password or code', path: ['code'] }),
);
export type PasskeyProof = z.output<typeof PasskeyProofBody>;

/** GET /api/auth/oidc/start?next=: the page to return to once signed in. */
export const OidcStartQuery = z.lazy(() => z.object({ next: z.string().optional() }));
export type OidcStart = z.output<typeof OidcStartQuery>;
