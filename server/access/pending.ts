import { newToken, sha256 } from '../http/secrets.js';
import type { Clock } from '../time.js';
import { createExpiringMap } from './expiring.js';

/** "A short-lived (5 min) pending cookie and no session" between the password and the second factor. */
export const PENDING_MS = 5 * 60 * 1000;
export const PENDING_COOKIE = 'pending';

export interface PendingLogin {
  accountId: number;
  /** The hash the password was checked against: a password changed meanwhile ends the wait. */
  passwordHash: string;
}

/** Passwords that were right, waiting for their second factor: at most 10,000 at once, 5 minutes each. */
export function createPendingLogins(clock: Clock) {
  const waiting = createExpiringMap<PendingLogin>(clock, PENDING_MS, 10_000);
  return {
    /** Returns the token for the browser's pending cookie. */
    start(login: PendingLogin): string {
      const token = newToken();
      waiting.put(sha256(token), login);
      return token;
    },
    /** The wait a token stands for, left in place (a wrong code may be retried within the throttle). */
    peek: (token: string): PendingLogin | undefined => waiting.get(sha256(token)),
    finish: (token: string): void => waiting.delete(sha256(token)),
  };
}

export type PendingLogins = ReturnType<typeof createPendingLogins>;
