import type { Request, RequestHandler, Response } from 'express';
import type { Config } from '../config.js';
import { forbidden, invalidToken, tooManyRequests, unauthorized } from '../errors.js';
import type { Auth, CredentialResolvers } from '../http/credentials.js';
import { AGENT_CREDENTIALS, type AgentCredential, type Authenticate, type RouteRecord } from '../http/routes.js';
import { roleHas, type Capability } from '../contract/access.js';
import { readSessionToken } from './cookies.js';
import { checkOrigin } from './origin.js';
import type { Throttle } from './throttle.js';
import { bearerCredential } from '../http/secrets.js';

/** "every route except /api/auth/session, /api/auth/password, /api/auth/logout answers 403" while a temporary password stands. */
const ALLOWED_BEFORE_PASSWORD_CHANGE = new Set(['/api/auth/session', '/api/auth/password', '/api/auth/logout']);
/** FLEET_REQUIRE_2FA: "users in scope must set up a second factor before any fleet access": only what sets one up. */
const ALLOWED_BEFORE_SECOND_FACTOR = new Set([
  ...ALLOWED_BEFORE_PASSWORD_CHANGE,
  '/api/auth/totp',
  '/api/auth/totp/setup',
  '/api/auth/totp/confirm',
  '/api/auth/passkeys',
  '/api/auth/passkeys/register/options',
  '/api/auth/passkeys/register/verify',
]);

export interface Authentication {
  /** The steps that enforce a route's declared access and credentials, run before its body is read. */
  authenticate: Authenticate;
  /** "A personal API token never works on /api/agent/*": for every path below it, declared or not. */
  refusePersonalTokens: RequestHandler;
}

/**
 * The one authentication step (Outline's `auth()`): each route declares which credentials it takes,
 * and this tries them in one place, sets `res.locals.auth`, and checks the route's capability. The
 * resolvers come from the composition root, so access knows neither tokens nor hosts.
 *
 * On a capability route, a bearer token is decided by the token alone: no cookie is read, no Origin
 * is needed (a browser cannot attach an Authorization header to a cross-site request without CORS,
 * which homefleet never grants). Without one, the request takes the cookie path: Origin first
 * (nothing that writes runs before it), then the session, the temporary-password rule, the role.
 * An agent's token is refused everywhere but on its own route, even beside a valid session cookie.
 */
export function createAuthentication(config: Config, throttle: Pick<Throttle, 'retryAfter' | 'recordFailure'>, resolvers: CredentialResolvers): Authentication {
  const agentPrefixes = AGENT_CREDENTIALS.map((kind) => resolvers.agents[kind].prefix);
  const isAgentToken = (token: string) => agentPrefixes.some((prefix) => token.startsWith(prefix));

  function viaToken(route: RouteRecord, access: Capability, token: string, req: Request, res: Response): void {
    if (!route.credentials.includes('token')) throw unauthorized('this route needs a browser session, not an API token');
    const ip = req.ip ?? '';
    // "Throttling never locks a valid credential out": the token is looked up first (its SHA-256,
    // as cheap as the throttle's own read), so a stale token beside it cannot take a working job
    // down. Only a failed check meets the window; the check and the count run without an await in
    // between, so parallel guesses cannot all pass the check before any is counted.
    const principal = resolvers.token.resolve(token, req.ip ?? null);
    if (!principal) {
      const wait = throttle.retryAfter('token.ip', ip);
      if (wait > 0) throw tooManyRequests(wait);
      throttle.recordFailure('token.ip', ip);
      throw invalidToken();
    }
    if (principal.mustChangePassword) throw forbidden('password change required');
    if (principal.secondFactorRequired) throw forbidden('second factor required');
    if (!roleHas(principal.user.role, access)) throw forbidden('forbidden');
    res.locals.auth = { kind: 'token', user: principal.user, token: principal.token };
    // What a token reads is the registry and its settings: no shared cache keeps a copy.
    res.set('Cache-Control', 'no-store');
  }

  function viaSession(route: RouteRecord, access: Capability, req: Request, res: Response): void {
    checkOrigin(config, req);
    // Session answers (an export with raw secrets, accounts, the audit) must not sit in a browser or proxy cache.
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Vary', 'Cookie');
    const token = route.credentials.includes('session') ? readSessionToken(req, config) : undefined;
    const active = token ? resolvers.session(token, route.activity !== false) : undefined;
    if (!active) throw unauthorized('authentication required');
    if (active.mustChangePassword && !ALLOWED_BEFORE_PASSWORD_CHANGE.has(route.path)) throw forbidden('password change required');
    if (active.secondFactorRequired && !ALLOWED_BEFORE_SECOND_FACTOR.has(route.path)) throw forbidden('second factor required');
    if (!roleHas(active.user.role, access)) throw forbidden('forbidden');
    res.locals.auth = { kind: 'session', user: active.user, session: active.session, ...(active.secondFactorRequired ? { secondFactorRequired: true as const } : {}) };
  }

  function forCapability(route: RouteRecord, access: Capability): RequestHandler {
    return (req, res, next) => {
      const bearer = bearerCredential(req.get('authorization'));
      if (bearer !== undefined && isAgentToken(bearer)) return next(invalidToken());
      if (bearer !== undefined) viaToken(route, access, bearer, req, res);
      else viaSession(route, access, req, res);
      next();
    };
  }

  /**
   * An agent route: HTTPS (unless FLEET_AGENT_ALLOW_HTTP), the per-peer budget of failed attempts,
   * then the route's own kind of token. All of it runs synchronously before the body is read, so
   * the throttle's check and its count cannot be interleaved.
   */
  function forAgent(kinds: AgentCredential[]): RequestHandler {
    return (req, res, next) => {
      if (!req.secure && !config.agentAllowHttp) return next(forbidden('https required'));
      const peer = req.ip ?? req.socket.remoteAddress ?? 'unknown';
      const wait = throttle.retryAfter('agent.ip', peer);
      if (wait > 0) return next(tooManyRequests(wait));
      for (const kind of kinds) {
        const credential = resolvers.agents[kind].resolve(req);
        if (credential === undefined) continue;
        // The resolver of `kind` made `credential`: TypeScript cannot pair the two inside a loop over kinds.
        res.locals.auth = { kind, credential, actor: resolvers.agents[kind].actor(credential as never) } as Auth;
        return next();
      }
      throttle.recordFailure('agent.ip', peer);
      next(invalidToken());
    };
  }

  return {
    authenticate(route) {
      const { access } = route;
      const agentKinds = AGENT_CREDENTIALS.filter((kind) => route.credentials.includes(kind));
      if (agentKinds.length) return [forAgent(agentKinds)];
      if (access === 'public' || access === 'machine') return [];
      return [forCapability(route, access)];
    },
    refusePersonalTokens: (req, _res, next) => {
      next(bearerCredential(req.get('authorization'))?.startsWith(resolvers.token.prefix) ? invalidToken() : undefined);
    },
  };
}
