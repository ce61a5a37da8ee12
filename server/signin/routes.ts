import type { Request, Response } from 'express';
import { clearStepCookie, PENDING_COOKIE, presentAccount, readSealedCookie, readStepCookie, requireOrigin, requireSecureTransport, setSessionCookie, setStepCookie } from '../access/api.js';
import type { AppContext } from '../context.js';
import type { UserAnswer } from '../contract/access.js';
import type { Passkey, RecoveryCodes, SignInMethods, TotpSetup, TotpStatus, UserSecondFactors } from '../contract/signin.js';
import { sessionOf } from '../http/locals.js';
import type { RouteTable } from '../http/routes.js';
import { FLOW_COOKIE, FLOW_MS, SignInRefused } from './oidc.js';
import { PASSKEY_COOKIE, PASSKEY_STEP_COOKIE } from './passkey-signin.js';
import { CHALLENGE_MS } from './passkeys.js';
import { nextPath } from './roles.js';
import { OidcStartQuery, PasskeyProofBody, PasskeyRegistrationBody, PasskeyRenameBody, PasskeySignInBody, TotpConfirmBody, TotpLoginBody, TotpRemoveBody } from '../contract/inputs/signin.js';
import type { SignIn } from './service.js';



/** `/api/auth/methods`, single sign-on, the TOTP second step and its setup, passkeys, and the administrator's reset. */
export function registerSignInRoutes(routes: RouteTable, ctx: AppContext, signIn: SignIn): void {
  const { config } = ctx;
  const browserPost = [requireOrigin(config), requireSecureTransport(config)];
  const { totp, passkeys, passkeySignIn, oidc } = signIn;

  const signedIn = (req: Request, res: Response, token: string) => {
    setSessionCookie(req, res, token, config);
    res.set('Cache-Control', 'no-store');
  };

  routes.on('GET /api/auth/methods', { access: 'public' }, (req): SignInMethods => signIn.methods(req));

  // Single sign-on: both ends are page loads, so failures go back to the sign-in page with a fixed code.
  routes.on('GET /api/auth/oidc/start', { access: 'public', query: OidcStartQuery }, async (req, res, { query }) => {
    const next = nextPath(query.next);
    res.set('Cache-Control', 'no-store');
    try {
      const { url, cookie } = await oidc.start(req, next);
      setStepCookie(req, res, config, FLOW_COOKIE, cookie, FLOW_MS / 1000);
      res.redirect(302, url);
    } catch (err) {
      if (!(err instanceof SignInRefused)) throw err;
      res.redirect(303, `/login?sso_error=${err.code}`);
    }
  });

  routes.on('GET /api/auth/oidc/callback', { access: 'public' }, async (req, res) => {
    const flow = readSealedCookie(req, config, FLOW_COOKIE);
    clearStepCookie(req, res, config, FLOW_COOKIE);
    res.set('Cache-Control', 'no-store');
    try {
      const query = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
      const { token, next } = await oidc.finish(flow, query);
      signedIn(req, res, token);
      res.redirect(303, next);
    } catch (err) {
      if (!(err instanceof SignInRefused)) throw err;
      res.redirect(303, `/login?sso_error=${err.code}`);
    }
  });

  routes.on('POST /api/auth/login/totp', { access: 'public', before: browserPost, body: TotpLoginBody, bodyLimit: '4kb' }, async (req, res, { body }): Promise<UserAnswer> => {
    const { account, token } = await totp.signIn(readStepCookie(req, config, PENDING_COOKIE), body);
    clearStepCookie(req, res, config, PENDING_COOKIE);
    signedIn(req, res, token);
    return { user: presentAccount(account) };
  });

  routes.on('GET /api/auth/totp', { access: 'self' }, (_req, res): TotpStatus => totp.status(sessionOf(res).user.id));

  routes.on('POST /api/auth/totp/setup', { access: 'self' }, (req, res): Promise<TotpSetup> => totp.setup(sessionOf(res).user));

  routes.on('POST /api/auth/totp/confirm', { access: 'self', body: TotpConfirmBody }, (req, res, { body }): Promise<RecoveryCodes> => totp.confirm(sessionOf(res).user, body.code));

  routes.on('DELETE /api/auth/totp', { access: 'self', before: [requireSecureTransport(config)], body: TotpRemoveBody }, async (req, res, { body }) => {
    await totp.remove(sessionOf(res).user, body.password);
    res.status(204).end();
  });

  routes.on('GET /api/auth/passkeys', { access: 'self' }, (_req, res): Passkey[] => passkeys.list(sessionOf(res).user.id));

  // The password (or a current code) first: a stolen session alone adds no passkey (issue 34).
  routes.on('POST /api/auth/passkeys/register/options', { access: 'self', before: [requireSecureTransport(config)], body: PasskeyProofBody, bodyLimit: '4kb' }, async (req, res, { body }) => {
    const { user, session } = sessionOf(res);
    res.set('Cache-Control', 'no-store');
    await signIn.confirmIdentity(user, session, body);
    return passkeys.registrationOptions(user, session, req);
  });

  routes.on('POST /api/auth/passkeys/register/verify', { access: 'self', body: PasskeyRegistrationBody, bodyLimit: '64kb' }, async (req, res, { body }): Promise<Passkey> => {
    const { user, session } = sessionOf(res);
    res.status(201);
    return passkeys.register(user, session, body.name, body.response);
  });

  routes.on('PATCH /api/auth/passkeys/:id', { access: 'self', body: PasskeyRenameBody }, (req, res, { params, body }): Passkey =>
    passkeys.rename(sessionOf(res).user, params.id, body.name),
  );

  routes.on('DELETE /api/auth/passkeys/:id', { access: 'self' }, (req, res, { params }) => {
    passkeys.remove(sessionOf(res).user, params.id);
    res.status(204).end();
  });

  // The challenge goes to the browser in a signed cookie, never into a server-side store anonymous requests could fill.
  routes.on('POST /api/auth/passkeys/options', { access: 'public', before: [requireOrigin(config)], bodyLimit: '1kb' }, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const { options, cookie } = await passkeySignIn.signInOptions(req);
    setStepCookie(req, res, config, PASSKEY_COOKIE, cookie, CHALLENGE_MS / 1000);
    return options;
  });

  routes.on('POST /api/auth/passkeys/verify', { access: 'public', before: browserPost, body: PasskeySignInBody, bodyLimit: '64kb' }, async (req, res, { body }): Promise<UserAnswer> => {
    const challenge = readSealedCookie(req, config, PASSKEY_COOKIE);
    clearStepCookie(req, res, config, PASSKEY_COOKIE);
    const { account, token } = await passkeySignIn.signIn(challenge, body.response);
    signedIn(req, res, token);
    return { user: presentAccount(account) };
  });

  // The passkey step of a password sign-in: its challenge names the account's passkeys and is bound to the pending cookie.
  routes.on('POST /api/auth/login/passkey/options', { access: 'public', before: browserPost, bodyLimit: '1kb' }, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const { options, cookie } = await passkeySignIn.stepOptions(readStepCookie(req, config, PENDING_COOKIE), req);
    setStepCookie(req, res, config, PASSKEY_STEP_COOKIE, cookie, CHALLENGE_MS / 1000);
    return options;
  });

  routes.on('POST /api/auth/login/passkey', { access: 'public', before: browserPost, body: PasskeySignInBody, bodyLimit: '64kb' }, async (req, res, { body }): Promise<UserAnswer> => {
    const challenge = readSealedCookie(req, config, PASSKEY_STEP_COOKIE);
    clearStepCookie(req, res, config, PASSKEY_STEP_COOKIE);
    const { account, token } = await passkeySignIn.stepSignIn(readStepCookie(req, config, PENDING_COOKIE), challenge, body.response);
    clearStepCookie(req, res, config, PENDING_COOKIE);
    signedIn(req, res, token);
    return { user: presentAccount(account) };
  });

  routes.on('GET /api/users/second-factors', { access: 'users.manage' }, (): UserSecondFactors[] => signIn.factorsOfAll());

  routes.on('DELETE /api/users/:id/second-factor', { access: 'users.manage' }, (req, res, { params }) => {
    totp.reset(params.id);
    res.status(204).end();
  });
}
