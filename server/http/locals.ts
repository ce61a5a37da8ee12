import type { Response } from 'express';
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
  return (auth as unknown as { kind: K; credential: AgentCredentialOf<K> }).credential;
}
