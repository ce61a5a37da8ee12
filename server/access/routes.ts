import type { AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { Account, CreatedUser, SecondFactorAsked, SessionAnswer, TemporaryPassword, UserAnswer } from '../contract/access.js';
import type { AuditEntry } from '../contract/audit.js';
import { sessionOf } from '../http/locals.js';
import { PageQuery } from '../contract/inputs/page.js';
import type { RouteTable } from '../http/routes.js';
import { presentAccount, type AccountService } from './accounts.js';
import { clearSessionCookie, setSessionCookie, setStepCookie } from './cookies.js';
import { requireOrigin, requireSecureTransport } from './origin.js';
import { LoginBody, PasswordChangeBody, UserCreateBody, UserPatchBody } from '../contract/inputs/access.js';
import { ABSOLUTE_MS, IDLE_MS } from './sessions.js';
import { PENDING_COOKIE, PENDING_MS } from './pending.js';
import { forbidden } from '../errors.js';

/** `/api/auth/*` (login, logout, session, own password), `/api/users*` and `/api/audit`. */
export function registerAccessRoutes(routes: RouteTable, ctx: AppContext, accounts: AccountService, audit: AuditLog): void {
  const sameOrigin = requireOrigin(ctx.config);
  const secure = requireSecureTransport(ctx.config);

  const { oidc } = ctx.config;
  // FLEET_OIDC_ONLY: "password sign-in off; setup and the recovery command still work".
  const passwordSignIn = oidc?.only ? [() => { throw forbidden(`password sign-in is turned off; sign in with ${oidc.name}`); }] : [];

  routes.on('POST /api/auth/login', { access: 'public', before: [...passwordSignIn, sameOrigin, secure], body: LoginBody }, async (req, res, { body }): Promise<UserAnswer | SecondFactorAsked> => {
    const result = await accounts.login(body.username, body.password);
    res.set('Cache-Control', 'no-store');
    if ('secondFactors' in result) {
      // No session yet: the pending cookie lets POST /api/auth/login/totp or /api/auth/login/passkey finish this sign-in.
      setStepCookie(req, res, ctx.config, PENDING_COOKIE, result.pending, PENDING_MS / 1000);
      return { second_factor: result.secondFactors[0]!, second_factors: result.secondFactors };
    }
    setSessionCookie(req, res, result.token, ctx.config);
    return { user: result.account };
  });

  routes.on('POST /api/auth/logout', { access: 'self' }, (req, res) => {
    const { user, session } = sessionOf(res);
    accounts.logout(session.id, user);
    clearSessionCookie(req, res, ctx.config);
    res.status(204).end();
  });

  routes.on('GET /api/auth/session', { access: 'self' }, (_req, res): SessionAnswer => {
    const { user, session } = sessionOf(res);
    const row = accounts.repo.byId(user.id)!;
    return {
      user: presentAccount(row),
      ...accounts.expiries(session, ABSOLUTE_MS, IDLE_MS),
      second_factor_required: res.locals.auth?.kind === 'session' && res.locals.auth.secondFactorRequired === true,
    };
  });

  routes.on('POST /api/auth/password', { access: 'self', before: [secure], body: PasswordChangeBody }, async (req, res, { body }) => {
    const { user, session } = sessionOf(res);
    const token = await accounts.changePassword(user.id, session.id, body.current_password, body.new_password);
    setSessionCookie(req, res, token, ctx.config);
    res.set('Cache-Control', 'no-store').status(204).end();
  });

  routes.on('GET /api/users', { access: 'users.manage' }, (): Account[] => accounts.list());

  routes.on('POST /api/users', { access: 'users.manage', body: UserCreateBody }, async (req, res, { body }): Promise<CreatedUser> => {
    const created = await accounts.createWithTemporaryPassword(body);
    res.status(201).set('Cache-Control', 'no-store');
    return created;
  });

  routes.on('PATCH /api/users/:id', { access: 'users.manage', body: UserPatchBody }, (req, res, { params, body }): UserAnswer => {
    const user = accounts.update(params.id, body);
    return { user };
  });

  routes.on('POST /api/users/:id/reset-password', { access: 'users.manage' }, async (req, res, { params }): Promise<TemporaryPassword> => {
    const temporary_password = await accounts.resetPassword(params.id);
    res.set('Cache-Control', 'no-store');
    return { temporary_password };
  });

  routes.on('POST /api/users/:id/revoke-sessions', { access: 'users.manage' }, (req, res, { params }) => {
    accounts.revokeSessions(params.id);
    res.status(204).end();
  });

  routes.on('GET /api/audit', { access: 'users.manage', query: PageQuery }, (_req, _res, { query }): AuditEntry[] => audit.list(query.limit, query.before));
}
