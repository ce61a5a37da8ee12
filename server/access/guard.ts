import type { RequestHandler } from 'express';
import type { AppContext } from '../context.js';
import { forbidden, unauthorized } from '../errors.js';
import type { AccessGuard } from '../http/routes.js';
import type { AccountService } from './accounts.js';
import { createAccountService } from './accounts.js';
import { roleHas } from './capabilities.js';
import { readSessionToken } from './cookies.js';
import { requireOrigin, SAFE_METHODS } from './origin.js';
import type { SessionRow } from './repo.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      session?: SessionRow;
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
  return (access, route) => {
    if (access === 'public' || access === 'machine') return [];
    const passwordChangeAllowed = ALLOWED_BEFORE_PASSWORD_CHANGE.has(route.path);
    const session: RequestHandler = (req, res, next) => {
      const token = readSessionToken(req);
      const active = token ? accounts.sessions.resolve(token) : undefined;
      if (!active) return next(unauthorized('authentication required'));
      const { account } = active;
      if (account.must_change_password && !passwordChangeAllowed) return next(forbidden('password change required'));
      if (!roleHas(account.role, access)) return next(forbidden('forbidden'));
      res.locals.user = { id: account.id, username: account.username, role: account.role };
      res.locals.session = active.session;
      if (!SAFE_METHODS.has(req.method)) {
        // The `request` audit row of a 2xx management write. A handler whose service takes it writes
        // it inside the transaction of its change (res.locals.requestAudit); otherwise it is written
        // here once the answer is sent.
        let written = false;
        const write = () => {
          written = true;
          accounts.audit.write({
            actor: account.username,
            action: 'request',
            target: null,
            ip: req.ip ?? null,
            detail: { method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode },
          });
        };
        res.locals.requestAudit = () => {
          if (!written && res.statusCode >= 200 && res.statusCode <= 299) write();
        };
        res.on('finish', () => {
          if (written || res.statusCode < 200 || res.statusCode > 299) return;
          try {
            write();
          } catch (err) {
            context.logger.error({ err: { message: (err as Error).message } }, 'audit write failed');
          }
        });
      }
      next();
    };
    return [origin, session];
  };
}
