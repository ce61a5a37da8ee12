import type { Response } from 'express';

/** Writes a request's `request` audit row; `about` names what it concerned when the route's path does not. */
export type RequestAudit = (about?: { target?: string; detail?: Record<string, unknown> }) => void;

/** The signed-in account as the access layer puts it on `res.locals` for a session route. */
export interface SessionUser {
  id: number;
  username: string;
  role: 'viewer' | 'operator' | 'administrator';
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      user?: SessionUser;
      /**
       * Writes this request's `request` audit row, if the access guard keeps one for it (a 2xx
       * management write; at most once). A write handler passes it to the service, which calls it
       * inside the transaction that holds the change, so the row commits with the change or not at all.
       */
      requestAudit?: RequestAudit;
    }
  }
}

/** Who is acting, for history and audit: the signed-in username, or null. */
export function actorOf(res: Response): string | null {
  return res.locals.user?.username ?? null;
}

/** The request's audit writer for the service's transaction (see `Locals.requestAudit`), or undefined. */
export function requestAuditOf(res: Response): RequestAudit | undefined {
  return res.locals.requestAudit;
}
