import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request, Response } from 'express';
import type { Actor, ActorType } from '../contract/audit.js';

type Auth = NonNullable<Response['locals']['auth']>;

export type { Actor };

/** The HTTP request a change is made through: its X-Request-Id, method, path, and the status it answers. */
export interface RequestInfo {
  id: string;
  method: string;
  path: string;
  /** Read when an entry is written: the route's declared success status, or what the handler set since. */
  status(): number;
}

/** What the change log reads of the work in hand, so no handler or service passes it. */
export interface ChangeContext {
  actor: Actor;
  ip: string | null;
  request?: RequestInfo | undefined;
}

const storage = new AsyncLocalStorage<ChangeContext>();

/** The context of the work in hand; outside any (a test calling a service, start-up), the system with no request. */
export function currentContext(): ChangeContext {
  return storage.getStore() ?? SYSTEM;
}

const SYSTEM: ChangeContext = { actor: { type: 'system', name: 'system' }, ip: null };

/** Runs `fn` as `actor` (a job's run, the host sweep, the recovery command): work that no request carries. */
export function runAs<T>(actor: Actor, fn: () => T, ip: string | null = null): T {
  return storage.run({ actor, ip }, fn);
}

/** Runs `fn` as `actor` within the work in hand: its request (and the request's id) stays, the actor is `actor`. */
export function actingAs<T>(actor: Actor, fn: () => T): T {
  return storage.run({ ...currentContext(), actor }, fn);
}

/** Runs `fn` in a context captured earlier: a run-now's entry, written when the run ends, names who asked. */
export function withContext<T>(context: ChangeContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** Runs a route's handler in its request's context: the route table calls it once authentication is done. */
export function runInRequest<T>(req: Request, res: Response, fn: () => T): T {
  const context: ChangeContext = {
    actor: actorOfAuth(res.locals.auth),
    ip: req.ip ?? null,
    request: { id: res.locals.requestId, method: req.method, path: req.originalUrl.split('?')[0]!, status: () => res.statusCode },
  };
  return storage.run(context, fn);
}

export function actorOfAuth(auth: Auth | undefined): Actor {
  if (!auth) return { type: 'anonymous' };
  if (auth.kind === 'session') return { type: 'user', id: auth.user.id, name: auth.user.username };
  if (auth.kind === 'token') return { type: 'token', id: auth.user.id, name: auth.user.username, token: auth.token };
  return auth.actor;
}

/**
 * How an entry's `actor` and a history row's `changed_by` name an actor, as they always have: the
 * username, `agent:<hostname>`, `job:<key>`; null for the system and for no one.
 */
export function actorName(actor: Actor): string | null {
  switch (actor.type) {
    case 'user':
    case 'token':
      return actor.name;
    case 'agent':
      return `agent:${actor.name}`;
    case 'job':
      return `job:${actor.name}`;
    default:
      return null;
  }
}

export const actorType = (actor: Actor): ActorType | null => (actor.type === 'anonymous' ? null : actor.type);
