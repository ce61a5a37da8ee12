import type { Request, Response } from 'express';
import type { AppContext } from '../context.js';
import { unauthorized } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam } from '../http/validate.js';
import { presentAccount, type AccountService, type Actor } from './accounts.js';
import { clearSessionCookie, setSessionCookie } from './cookies.js';
import { requireOrigin, requireSecureTransport } from './origin.js';
import { LoginBody, PageQuery, PasswordChangeBody, UserCreateBody, UserPatchBody } from './schema.js';
import { ABSOLUTE_MS, IDLE_MS } from './sessions.js';
import { actorOf } from '../http/locals.js';

const idParam = (raw: string | undefined) => parseIntegerParam(raw, 'invalid id');

function actor(req: Request, res: Response): Actor {
  return { actor: actorOf(res), ip: req.ip ?? null };
}

function signedIn(res: Response) {
  const user = res.locals.user;
  const session = res.locals.session;
  if (!user || !session) throw unauthorized('authentication required');
  return { user, session };
}

/** `/api/auth/*` (login, logout, session, own password), `/api/users*` and `/api/audit`. */
export function registerAccessRoutes(routes: RouteTable, ctx: AppContext, accounts: AccountService): void {
  const origin = requireOrigin(ctx.config);
  const secure = requireSecureTransport(ctx.config);

  routes.post('/api/auth/login', { access: 'public', before: [origin, secure], body: LoginBody }, async (req, res) => {
    const { account, token } = await accounts.login(req.body.username, req.body.password, req.ip ?? null);
    setSessionCookie(req, res, token, ctx.config);
    res.set('Cache-Control', 'no-store');
    return { user: account };
  });

  routes.post('/api/auth/logout', { access: 'self' }, (req, res) => {
    const { user, session } = signedIn(res);
    accounts.sessions.revoke(session.id);
    res.locals.audited = true;
    accounts.audit.write({ actor: user.username, action: 'logout', target: user.username, ip: req.ip ?? null });
    clearSessionCookie(req, res, ctx.config);
    res.status(204).end();
  });

  routes.get('/api/auth/session', { access: 'self' }, (_req, res) => {
    const { user, session } = signedIn(res);
    const row = accounts.repo.byId(user.id)!;
    return {
      user: presentAccount(row),
      ...accounts.expiries(session, ABSOLUTE_MS, IDLE_MS),
    };
  });

  routes.post('/api/auth/password', { access: 'self', before: [secure], body: PasswordChangeBody }, async (req, res) => {
    const { user, session } = signedIn(res);
    const token = await accounts.changePassword(user.id, session.id, req.body.current_password, req.body.new_password, req.ip ?? null);
    setSessionCookie(req, res, token, ctx.config);
    res.locals.audited = true;
    res.status(204).end();
  });

  routes.get('/api/users', { access: 'users.manage' }, () => accounts.list());

  routes.post('/api/users', { access: 'users.manage', body: UserCreateBody }, async (req, res) => {
    const created = await accounts.createWithTemporaryPassword(req.body, actor(req, res));
    res.locals.audited = true;
    res.status(201).set('Cache-Control', 'no-store');
    return created;
  });

  routes.patch('/api/users/:id', { access: 'users.manage', body: UserPatchBody }, (req, res) => {
    const user = accounts.update(idParam(req.params.id), req.body, actor(req, res));
    res.locals.audited = true;
    return { user };
  });

  routes.post('/api/users/:id/reset-password', { access: 'users.manage' }, async (req, res) => {
    const temporary_password = await accounts.resetPassword(idParam(req.params.id), actor(req, res));
    res.locals.audited = true;
    res.set('Cache-Control', 'no-store');
    return { temporary_password };
  });

  routes.post('/api/users/:id/revoke-sessions', { access: 'users.manage' }, (req, res) => {
    accounts.revokeSessions(idParam(req.params.id), actor(req, res));
    res.locals.audited = true;
    res.status(204).end();
  });

  routes.get('/api/audit', { access: 'users.manage', query: PageQuery }, (req) => {
    const page = req.query as unknown as PageQuery;
    return accounts.audit.list(page.limit, page.before);
  });
}
