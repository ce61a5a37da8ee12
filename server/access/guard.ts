import type { RequestHandler } from 'express';
import type { AppContext } from '../context.js';
import { forbidden, invalidToken, unauthorized } from '../errors.js';
import type { AccessGuard } from '../http/routes.js';
import { carriesAgentToken } from '../hosts/tokens.js';
import type { AccountService } from './accounts.js';
import { createAccountService } from './accounts.js';
import { roleHas } from './capabilities.js';
import { readSessionToken } from './cookies.js';
import { auditRequest, auditTargetOf } from './request-audit.js';
import { requireOrigin, SAFE_METHODS } from './origin.js';
import type { SessionRow } from './repo.js';
import { createBearerGuard } from '../tokens/guard.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      session?: SessionRow;
      /** Set by a handler that wrote its own audit entry (user.create, …): no generic `request` entry then. */
      audited?: boolean;
      /** Names only (changed fields, ids), merged into the `request` entry's detail: never values or bodies. */
      auditDetail?: Record<string, unknown>;
    }
  }
}

/** "every route except /api/auth/session, /api/auth/password, /api/auth/logout answers 403" while a temporary password stands. */
const ALLOWED_BEFORE_PASSWORD_CHANGE = new Set(['/api/auth/session', '/api/auth/password', '/api/auth/logout']);

/**
 * The access layer's enforcement of each route's declared capability: Origin first (nothing that
 * writes runs before it), then the session from the cookie, the temporary-password rule, the role.
 * Public and machine routes pass through; they do their own checks.
 */
export function createAccessGuard(context: AppContext, accounts: AccountService = createAccountService(context)): AccessGuard {
  const origin = requireOrigin(context.config);
  // Personal API tokens (server/tokens): a bearer request is decided by its token, else the cookie path below.
  const bearer = createBearerGuard(context, accounts);
  // "agent tokens never work anywhere else (401)": refused even beside a valid session cookie,
  // with the body every other refused bearer token gets. One handler for every guarded route.
  const noAgentToken: RequestHandler = (req, _res, next) => next(carriesAgentToken(req.get('authorization')) ? invalidToken() : undefined);
  return (access, route) => {
    if (access === 'public' || access === 'machine') return [];
    const passwordChangeAllowed = ALLOWED_BEFORE_PASSWORD_CHANGE.has(route.path);
    const targetOf = auditTargetOf(route.path);
    const session: RequestHandler = (req, res, next) => {
      // Session answers (an export with raw secrets, accounts, the audit) must not sit in a browser or proxy cache.
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Vary', 'Cookie');
      const token = readSessionToken(req, context.config);
      const active = token ? accounts.sessions.resolve(token, { touch: route.activity !== false }) : undefined;
      if (!active) return next(unauthorized('authentication required'));
      const { account } = active;
      if (account.must_change_password && !passwordChangeAllowed) return next(forbidden('password change required'));
      if (!roleHas(account.role, access)) return next(forbidden('forbidden'));
      res.locals.user = { id: account.id, username: account.username, role: account.role };
      res.locals.session = active.session;
      if (!SAFE_METHODS.has(req.method)) auditRequest(accounts.audit, context.logger, req, res, account.username, targetOf);
      next();
    };
    return [noAgentToken, bearer(route, targetOf, [origin, session])];
  };
}
