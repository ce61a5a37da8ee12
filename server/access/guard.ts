import type { RequestHandler } from 'express';
import type { AppContext } from '../context.js';
import { forbidden, unauthorized } from '../errors.js';
import type { RequestAudit } from '../http/locals.js';
import type { AccessGuard } from '../http/routes.js';
import { carriesAgentToken } from '../hosts/tokens.js';
import type { AccountService } from './accounts.js';
import { createAccountService } from './accounts.js';
import { roleHas } from './capabilities.js';
import { readSessionToken } from './cookies.js';
import { requireOrigin, SAFE_METHODS } from './origin.js';
import type { SessionRow } from './repo.js';
import { createBearerGuard, invalidToken } from '../tokens/guard.js';

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
 * What a `request` audit entry is about, from the route's first path parameter and the word
 * before it: `/api/instances/:vmid` → "instance 102", `/api/users/:id/reset-password` → "user 5".
 * Worked out once per route, so a request only fills in the value.
 */
function auditTargetOf(path: string): ((params: Record<string, string>) => string | null) | undefined {
  const match = /\/([a-z-]+)\/:(\w+)/.exec(path);
  if (!match) return undefined;
  const noun = match[1]!.replace(/ies$/, 'y').replace(/s$/, '');
  const param = match[2]!;
  return (params) => (params[param] === undefined ? null : `${noun} ${params[param]!.slice(0, 64)}`);
}

/**
 * The access layer's enforcement of each route's declared capability: Origin first (nothing that
 * writes runs before it), then the session from the cookie, the temporary-password rule, the role.
 * Public and machine routes pass through; they do their own checks.
 */
export function createAccessGuard(context: AppContext, accounts: AccountService = createAccountService(context)): AccessGuard {
  const origin = requireOrigin(context.config);
  // Personal API tokens (server/tokens): a bearer request is decided by its token, else the cookie path below.
  const bearer = createBearerGuard(context, accounts);
  return (access, route) => {
    if (access === 'public' || access === 'machine') return [];
    const passwordChangeAllowed = ALLOWED_BEFORE_PASSWORD_CHANGE.has(route.path);
    // "agent tokens never work anywhere else (401)": refused even beside a valid session cookie,
    // with the body every other refused bearer token gets.
    const noAgentToken: RequestHandler = (req, _res, next) =>
      next(carriesAgentToken(req.get('authorization')) ? invalidToken() : undefined);
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
      if (!SAFE_METHODS.has(req.method)) {
        // The `request` audit row of a 2xx management write. A handler whose service takes it writes
        // it inside the transaction of its change (res.locals.requestAudit); otherwise it is written
        // here once the answer is sent.
        let written = false;
        const write: RequestAudit = (about = {}) => {
          written = true;
          accounts.audit.write({
            actor: account.username,
            action: 'request',
            target: about.target ?? targetOf?.(req.params as Record<string, string>) ?? null,
            ip: req.ip ?? null,
            detail: { method: req.method, path: req.originalUrl.split('?')[0], status: res.statusCode, ...res.locals.auditDetail, ...about.detail },
          });
        };
        res.locals.requestAudit = (about) => {
          if (!written && !res.locals.audited && res.statusCode >= 200 && res.statusCode <= 299) write(about);
        };
        res.on('finish', () => {
          if (written || res.statusCode < 200 || res.statusCode > 299 || res.locals.audited) return;
          try {
            write();
          } catch (err) {
            context.logger.error({ err: { message: (err as Error).message } }, 'audit write failed');
          }
        });
      }
      next();
    };
    return [noAgentToken, bearer(access, route, [origin, session])];
  };
}
