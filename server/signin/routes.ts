import type { Request, Response } from 'express';
import { clearStepCookie, PENDING_COOKIE, presentAccount, readSealedCookie, readStepCookie, requireOrigin, requireSecureTransport, setSessionCookie, setStepCookie } from '../access/api.js';
import type { AppContext } from '../context.js';
import type { UserAnswer } from '../contract/access.js';
import type { Passkey, RecoveryCodes, SignInMethods, TotpSetup, TotpStatus, UserSecondFactors } from '../contract/signin.js';
import { sessionOf } from '../http/locals.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam } from '../http/validate.js';
import { FLOW_COOKIE, FLOW_MS, SignInRefused } from './oidc.js';
import { PASSKEY_COOKIE, PASSKEY_STEP_COOKIE } from './passkey-signin.js';
import { CHALLENGE_MS } from './passkeys.js';
import { nextPath } from './roles.js';
import { OidcStartQuery, PasskeyProofBody, PasskeyRegistrationBody, PasskeyRenameBody, PasskeySignInBody, TotpConfirmBody, TotpLoginBody, TotpRemoveBody } from './schema.js';
import type { SignIn } from './service.js';

const idParam = (raw: string | undefined) => parseIntegerParam(raw, 'invalid id');


/** `/api/auth/methods`, single sign-on, the TOTP second step and its setup, passkeys, and the administrator's reset. */
export function registerSignInRoutes(routes: RouteTable, ctx: AppContext, signIn: SignIn): void {
  const { config } = ctx;
  const browserPost = [requireOrigin(config), requireSecureTransport(config)];
  const { totp, passkeys, passkeySignIn, oidc } = signIn;

  const signedIn = (req: Request, res: Response, token: string) => {
    setSessionCookie(req, res, token, config);
    res.set('Cache-Control', 'no-store');
  };

  routes.get('/api/auth/methods', { access: 'public' }, (req): SignInMethods => signIn.methods(req));

  // Single sign-on: both ends are page loads, so failures go back to the sign-in page with a fixed code.
  routes.get('/api/auth/oidc/start', { access: 'public', query: OidcStartQuery }, async (req, res) => {
    const next = nextPath((req.query as { next?: string }).next);
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

  routes.get('/api/auth/oidc/callback', { access: 'public' }, async (req, res) => {
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

  routes.post('/api/auth/login/totp', { access: 'public', before: browserPost, body: TotpLoginBody, bodyLimit: '4kb' }, async (req, res): Promise<UserAnswer> => {
    const { account, token } = await totp.signIn(readStepCookie(req, config, PENDING_COOKIE), req.body);
    clearStepCookie(req, res, config, PENDING_COOKIE);
    signedIn(req, res, token);
    return { user: presentAccount(account) };
  });

  routes.get('/api/auth/totp', { access: 'self' }, (_req, res): TotpStatus => totp.status(sessionOf(res).user.id));

  routes.post('/api/auth/totp/setup', { access: 'self' }, (req, res): Promise<TotpSetup> => totp.setup(sessionOf(res).user));

  routes.post('/api/auth/totp/confirm', { access: 'self', body: TotpConfirmBody }, (req, res): Promise<RecoveryCodes> => totp.confirm(sessionOf(res).user, req.body.code));

  routes.delete('/api/auth/totp', { access: 'self', before: [requireSecureTransport(config)], body: TotpRemoveBody }, async (req, res) => {
    await totp.remove(sessionOf(res).user, req.body.password);
    res.status(204).end();
  });

  routes.get('/api/auth/passkeys', { access: 'self' }, (_req, res): Passkey[] => passkeys.list(sessionOf(res).user.id));

  // The password (or a current code) first: a stolen session alone adds no passkey (issue 34).
  routes.post('/api/auth/passkeys/register/options', { access: 'self', before: [requireSecureTransport(config)], body: PasskeyProofBody, bodyLimit: '4kb' }, async (req, res) => {
    const { user, session } = sessionOf(res);
    res.set('Cache-Control', 'no-store');
    await signIn.confirmIdentity(user, session, req.body);
    return passkeys.registrationOptions(user, session, req);
  });

  routes.post('/api/auth/passkeys/register/verify', { access: 'self', body: PasskeyRegistrationBody, bodyLimit: '64kb' }, async (req, res): Promise<Passkey> => {
    const { user, session } = sessionOf(res);
    res.status(201);
    return passkeys.register(user, session, req.body.name, req.body.response);
  });

  routes.patch('/api/auth/passkeys/:id', { access: 'self', body: PasskeyRenameBody }, (req, res): Passkey =>
    passkeys.rename(sessionOf(res).user, idParam(req.params.id), req.body.name),
  );

  routes.delete('/api/auth/passkeys/:id', { access: 'self' }, (req, res) => {
    passkeys.remove(sessionOf(res).user, idParam(req.params.id));
    res.status(204).end();
  });

  // The challenge goes to the browser in a signed cookie, never into a server-side store anonymous requests could fill.
  routes.post('/api/auth/passkeys/options', { access: 'public', before: [requireOrigin(config)], bodyLimit: '1kb' }, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const { options, cookie } = await passkeySignIn.signInOptions(req);
    setStepCookie(req, res, config, PASSKEY_COOKIE, cookie, CHALLENGE_MS / 1000);
    return options;
  });

  routes.post('/api/auth/passkeys/verify', { access: 'public', before: browserPost, body: PasskeySignInBody, bodyLimit: '64kb' }, async (req, res): Promise<UserAnswer> => {
    const challenge = readSealedCookie(req, config, PASSKEY_COOKIE);
    clearStepCookie(req, res, config, PASSKEY_COOKIE);
    const { account, token } = await passkeySignIn.signIn(challenge, req.body.response);
    signedIn(req, res, token);
    return { user: presentAccount(account) };
  });

  // The passkey step of a password sign-in: its challenge names the account's passkeys and is bound to the pending cookie.
  routes.post('/api/auth/login/passkey/options', { access: 'public', before: browserPost, bodyLimit: '1kb' }, async (req, res) => {
    res.set('Cache-Control', 'no-store');
    const { options, cookie } = await passkeySignIn.stepOptions(readStepCookie(req, config, PENDING_COOKIE), req);
    setStepCookie(req, res, config, PASSKEY_STEP_COOKIE, cookie, CHALLENGE_MS / 1000);
    return options;
  });

  routes.post('/api/auth/login/passkey', { access: 'public', before: browserPost, body: PasskeySignInBody, bodyLimit: '64kb' }, async (req, res): Promise<UserAnswer> => {
    const challenge = readSealedCookie(req, config, PASSKEY_STEP_COOKIE);
    clearStepCookie(req, res, config, PASSKEY_STEP_COOKIE);
    const { account, token } = await passkeySignIn.stepSignIn(readStepCookie(req, config, PENDING_COOKIE), challenge, req.body.response);
    clearStepCookie(req, res, config, PENDING_COOKIE);
    signedIn(req, res, token);
    return { user: presentAccount(account) };
  });

  routes.get('/api/users/second-factors', { access: 'users.manage' }, (): UserSecondFactors[] => signIn.factorsOfAll());

  routes.delete('/api/users/:id/second-factor', { access: 'users.manage' }, (req, res) => {
    totp.reset(idParam(req.params.id));
    res.status(204).end();
  });
}
