import type { Response } from 'express';

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
    }
  }
}

/** Who is acting, for history and audit: the signed-in username, or null. */
export function actorOf(res: Response): string | null {
  return res.locals.user?.username ?? null;
}
