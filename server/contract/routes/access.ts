import { answer, input, route } from '../route.js';
import type { Account, CreatedUser, SecondFactorAsked, SessionAnswer, TemporaryPassword, UserAnswer } from '../access.js';
import type { LoginRequest, PasswordChange, UserCreate, UserPatch } from '../inputs/access.js';
import type { AuditEntry } from '../audit.js';
import type { PageQueryInput } from '../inputs/page.js';
import type { OidcStart, PasskeyProof, PasskeyRegistration, PasskeyRename, PasskeySignIn, TotpConfirm, TotpLogin, TotpRemove } from '../inputs/signin.js';
import type { Passkey, RecoveryCodes, SignInMethods, TotpSetup, TotpStatus, UserSecondFactors } from '../signin.js';
import type { TokenCreate, TokenListQuery } from '../inputs/tokens.js';
import type { ApiToken, CreatedApiToken } from '../tokens.js';

/** WebAuthn options as @simplewebauthn/server makes them and @simplewebauthn/browser takes them (JSON; the contract names only the challenge). */
export interface WebAuthnOptions {
  challenge: string;
}

/** Sign-in, sessions, accounts, second factors, personal API tokens and the audit log. */
export const accessRoutes = {
  'POST /api/auth/login': route({ body: input<LoginRequest>(), answers: [answer<UserAnswer | SecondFactorAsked>(200, 'Signed in, or the second factor asked for')] }),
  'POST /api/auth/logout': route({ answers: [answer(204, 'Signed out')] }),
  'GET /api/auth/session': route({ answers: [answer<SessionAnswer>(200, 'The signed-in user and the session\'s expiries')] }),
  'POST /api/auth/password': route({ body: input<PasswordChange>(), answers: [answer(204, 'Changed; the session is replaced')] }),
  'GET /api/users': route({ answers: [answer<Account[]>(200, 'The accounts')] }),
  'POST /api/users': route({ body: input<UserCreate>(), answers: [answer<CreatedUser>(201, 'The account and its temporary password (shown once)')] }),
  'PATCH /api/users/:id': route({ ids: ['id'], body: input<UserPatch>(), answers: [answer<UserAnswer>(200, 'The account as changed')] }),
  'POST /api/users/:id/reset-password': route({ ids: ['id'], answers: [answer<TemporaryPassword>(200, 'The temporary password (shown once)')] }),
  'POST /api/users/:id/revoke-sessions': route({ ids: ['id'], answers: [answer(204, 'Signed out everywhere')] }),
  'GET /api/audit': route({ query: input<PageQueryInput>(), answers: [answer<AuditEntry[]>(200, 'Audit entries, newest first')] }),

  'GET /api/auth/methods': route({ answers: [answer<SignInMethods>(200, 'The ways to sign in')] }),
  'GET /api/auth/oidc/start': route({ query: input<OidcStart>(), answers: [answer(302, 'To the identity provider')] }),
  'GET /api/auth/oidc/callback': route({ answers: [answer(303, 'Signed in, to the page asked for (or to the sign-in page with `sso_error`)')] }),
  'POST /api/auth/login/totp': route({ body: input<TotpLogin>(), answers: [answer<UserAnswer>(200, 'Signed in')] }),
  'GET /api/auth/totp': route({ answers: [answer<TotpStatus>(200, 'Whether TOTP is set up')] }),
  'POST /api/auth/totp/setup': route({ answers: [answer<TotpSetup>(200, 'The secret and its otpauth URL')] }),
  'POST /api/auth/totp/confirm': route({ body: input<TotpConfirm>(), answers: [answer<RecoveryCodes>(200, 'The recovery codes (shown once)')] }),
  'DELETE /api/auth/totp': route({ body: input<TotpRemove>(), answers: [answer(204, 'TOTP removed')] }),
  'GET /api/auth/passkeys': route({ answers: [answer<Passkey[]>(200, 'Your passkeys')] }),
  'POST /api/auth/passkeys/register/options': route({ body: input<PasskeyProof>(), answers: [answer<WebAuthnOptions>(200, 'WebAuthn registration options')] }),
  'POST /api/auth/passkeys/register/verify': route({ body: input<PasskeyRegistration>(), answers: [answer<Passkey>(200, 'The passkey added')] }),
  'PATCH /api/auth/passkeys/:id': route({ ids: ['id'], body: input<PasskeyRename>(), answers: [answer<Passkey>(200, 'The passkey renamed')] }),
  'DELETE /api/auth/passkeys/:id': route({ ids: ['id'], answers: [answer(204, 'Removed')] }),
  'POST /api/auth/passkeys/options': route({ answers: [answer<WebAuthnOptions>(200, 'WebAuthn sign-in options')] }),
  'POST /api/auth/passkeys/verify': route({ body: input<PasskeySignIn>(), answers: [answer<UserAnswer>(200, 'Signed in')] }),
  'POST /api/auth/login/passkey/options': route({ answers: [answer<WebAuthnOptions>(200, 'WebAuthn options for the second step')] }),
  'POST /api/auth/login/passkey': route({ body: input<PasskeySignIn>(), answers: [answer<UserAnswer>(200, 'Signed in')] }),
  'GET /api/users/second-factors': route({ answers: [answer<UserSecondFactors[]>(200, 'Each account\'s second factors')] }),
  'DELETE /api/users/:id/second-factor': route({ ids: ['id'], answers: [answer(204, 'Cleared')] }),

  'GET /api/tokens': route({ query: input<TokenListQuery>(), answers: [answer<ApiToken[]>(200, 'Personal API tokens, never their secrets')] }),
  'POST /api/tokens': route({ body: input<TokenCreate>(), answers: [answer<CreatedApiToken>(201, 'The token (shown once)')] }),
  'DELETE /api/tokens/:id': route({ ids: ['id'], answers: [answer(204, 'Revoked')] }),

  'GET /setup': route({ answers: [answer(200, 'The first-run setup page', 'text/html')] }),
  'POST /setup': route({
    answers: [answer<UserAnswer>(201, 'The administrator is made (a JSON request)'), answer(303, 'The administrator is made (the form): to the sign-in page')],
  }),
} as const;
