import type { Request, RequestHandler, Response } from 'express';
import type { AccountService } from '../access/accounts.js';
import { roleHas } from '../access/capabilities.js';
import { bearerCredential } from '../access/tokens.js';
import type { AppContext } from '../context.js';
import { forbidden, invalidToken, tooManyRequests, unauthorized } from '../errors.js';
import type { Access, RouteRecord } from '../http/routes.js';
import { SAFE_METHODS } from '../access/origin.js';
import { auditRequest, type AuditTarget } from '../access/request-audit.js';
import { createTokenService, type TokenService } from './service.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** Set when a personal API token, not a browser session, authenticated the request. */
      apiToken?: { id: number; name: string };
    }
  }
}

/**
 * "Tokens cannot use /api/auth/* password or session routes, user management routes": everything
 * declared `self` (own password, session, sign-out, managing tokens) or `users.manage` needs a browser
 * session, so a leaked token cannot mint more tokens, change a password or touch accounts. Other
 * routes say so with `credentials: ['session']` (a snapshot download, a new enrollment token).
 */
export function tokenMayUse(route: Pick<RouteRecord, 'access' | 'credentials'>): boolean {
  if (route.credentials) return route.credentials.includes('token');
  return route.access !== 'self' && route.access !== 'users.manage';
}

/** The token of an `Authorization: Bearer …` header, or undefined when the request carries none. */
export function bearerToken(req: Request): string | undefined {
  return bearerCredential(req.get('authorization'));
}

/**
 * Personal API tokens in front of the session guard. A request with a bearer token is decided by the
 * token alone: no cookie is read, no Origin is needed (a browser cannot attach an Authorization header
 * to a cross-site request without CORS, which homefleet never grants), and no session is made.
 * Without one, the request takes the cookie path unchanged.
 */
export function createBearerGuard(context: AppContext, accounts: AccountService, tokens: TokenService = createTokenService(context, accounts.audit)) {
  const authenticate = (route: RouteRecord, targetOf: AuditTarget | undefined, req: Request, res: Response) => {
    const { access } = route;
    const token = bearerToken(req)!;
    if (!tokenMayUse(route)) throw unauthorized('this route needs a browser session, not an API token');
    const ip = req.ip ?? '';
    // Failed token checks share the login throttle's table; the check and the count run without an
    // await in between, so parallel guesses cannot all pass the check before any is counted.
    const wait = accounts.throttle.retryAfter('token.ip', ip);
    if (wait > 0) throw tooManyRequests(wait);
    const principal = tokens.authenticate(token, req.ip ?? null);
    if (!principal) {
      accounts.throttle.recordFailure('token.ip', ip);
      throw invalidToken();
    }
    if (principal.mustChangePassword) throw forbidden('password change required');
    if (!roleHas(principal.user.role, access as Exclude<Access, 'public' | 'machine'>)) throw forbidden('forbidden');
    res.locals.user = principal.user;
    res.locals.apiToken = principal.token;
    // What a token reads is the registry and its settings: no shared cache keeps a copy.
    res.set('Cache-Control', 'no-store');
    if (!SAFE_METHODS.has(req.method)) auditRequest(accounts.audit, context.logger, req, res, principal.user.username, targetOf, { token: principal.token });
  };

  /** One middleware: the bearer path when the request has a token, else `viaCookie` in order. */
  return (route: RouteRecord, targetOf: AuditTarget | undefined, viaCookie: RequestHandler[]): RequestHandler =>
    (req, res, next) => {
      if (bearerToken(req) === undefined) return runChain(viaCookie, req, res, next);
      authenticate(route, targetOf, req, res);
      next();
    };
}

function runChain(chain: RequestHandler[], req: Request, res: Response, done: (err?: unknown) => void): void {
  let i = 0;
  const step = (err?: unknown): void => {
    if (err !== undefined || i === chain.length) return done(err);
    const handler = chain[i++]!;
    try {
      const result = handler(req, res, step) as unknown;
      if (result instanceof Promise) result.catch(step);
    } catch (e) {
      step(e);
    }
  };
  step();
}
