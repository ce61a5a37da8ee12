import type { Request, Response } from 'express';
import type { Actor } from '../audit.js';
import { unauthorized } from '../errors.js';
import type { AgentCredentialOf, Auth, SessionRef, SessionUser } from './credentials.js';
import type { AgentCredential } from './routes.js';

export type { SessionUser };

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** This request's id (X-Request-Id): in its log line, its answer and its audit entry. */
      requestId: string;
      /** Absent on public routes and on machine routes that take no credential. */
      auth?: Auth;
    }
  }
}

/** The signed-in person of a session or token route; 401 where there is none (never on such a route). */
export function userOf(res: Response): SessionUser {
  const auth = res.locals.auth;
  if (auth?.kind !== 'session' && auth?.kind !== 'token') throw unauthorized('authentication required');
  return auth.user;
}

/** The browser session of a session-only route (`credentials: ['session']`). */
export function sessionOf(res: Response): { user: SessionUser; session: SessionRef } {
  const auth = res.locals.auth;
  if (auth?.kind !== 'session') throw unauthorized('authentication required');
  return auth;
}

/** The credential of an agent route, as its kind's resolver found it. */
export function agentCredentialOf<K extends AgentCredential>(res: Response, kind: K): AgentCredentialOf<K> {
  const auth = res.locals.auth;
  if (auth?.kind !== kind) throw unauthorized('invalid token');
  // Narrowed by the check above; TypeScript cannot narrow a union by a generic kind.
  return (auth as { kind: K; credential: AgentCredentialOf<K> }).credential;
}

/** Who is acting, for history and audit: the signed-in username, or null. */
export function actorOf(res: Response): string | null {
  const auth = res.locals.auth;
  return auth?.kind === 'session' || auth?.kind === 'token' ? auth.user.username : null;
}

/**
 * Who made a change through this request, for its audit entry: the person, their address, the API
 * token they used, and the request (id, method, path and the status set so far: set the success
 * status before the change, as the entry is written inside its transaction).
 */
export function changedBy(req: Request, res: Response): Actor {
  const auth = res.locals.auth;
  return {
    actor: actorOf(res),
    ip: req.ip ?? null,
    ...(auth?.kind === 'token' ? { token: auth.token } : {}),
    request: { id: res.locals.requestId, method: req.method, path: req.originalUrl.split('?')[0]!, status: res.statusCode },
  };
}

/** Where a request came from (address, token, request), for an entry whose actor the service names itself. */
export function whereFrom(req: Request, res: Response): Omit<Actor, 'actor'> {
  const { actor: _none, ...where } = changedBy(req, res);
  return where;
}
