import type { Clock } from '../time.js';
import type { AccountRepo, AccountRow, SessionRow } from './repo.js';
import { unlessBusy } from '../db/busy.js';
import { newToken, sha256 } from '../http/secrets.js';

export const ABSOLUTE_MS = 12 * 60 * 60 * 1000;
export const IDLE_MS = 30 * 60 * 1000;

/** Past its 12 hours, or idle for 30 minutes: the one expiry rule, for requests and open event streams alike. */
export function sessionExpired(session: { created_at: number; last_seen: number }, now: number): boolean {
  return now >= session.created_at + ABSOLUTE_MS || now >= session.last_seen + IDLE_MS;
}

/** Idle time is refreshed at most this often, so a busy dashboard does not write on every request. */
export const TOUCH_MS = 60 * 1000;

export interface ActiveSession {
  session: SessionRow;
  account: AccountRow;
}

/** Sessions ended: one (`sessionId`) or all of an account's (`accountId`); `reason` is shown to the person ("signed out"). */
export interface SessionRevoked {
  accountId?: number;
  sessionId?: number;
  reason: string;
}

declare module '../bus.js' {
  interface InternalEvents {
    /** Open event streams re-check at once (server/events). */
    'session.revoked': SessionRevoked;
  }
}

/** Told when sessions end; the account service announces it on the bus. */
export type RevokeListener = (change: SessionRevoked) => void;

export function createSessions(repo: AccountRepo, clock: Clock, onRevoke: RevokeListener = () => {}) {
  return {
    /** A new session for the account, replacing its previous ones ("one browser session per account"). Call inside a transaction. */
    issue(accountId: number, reason = 'signed in again elsewhere'): string {
      const token = newToken();
      repo.deleteSessionsOf(accountId);
      onRevoke({ accountId, reason });
      repo.insertSession(accountId, sha256(token), clock.now());
      return token;
    },

    /**
     * The live session of a token, its idle time refreshed; expired sessions are deleted on sight.
     * `touch: false` (the event stream) leaves idle time alone: a stream is not activity.
     */
    resolve(token: string, options: { touch?: boolean } = {}): ActiveSession | undefined {
      const found = repo.sessionByHash(sha256(token));
      if (!found) return undefined;
      const now = clock.now();
      const { account, ...session } = found;
      if (sessionExpired(session, now) || !account.enabled) {
        unlessBusy(() => repo.deleteSession(session.id));
        return undefined;
      }
      if (options.touch !== false && now - session.last_seen >= TOUCH_MS && unlessBusy(() => repo.touchSession(session.id, now))) {
        session.last_seen = now;
      }
      return { session, account };
    },

    revoke(sessionId: number, reason = 'signed out'): void {
      repo.deleteSession(sessionId);
      onRevoke({ sessionId, reason });
    },
    revokeAll(accountId: number, reason = 'sessions revoked'): void {
      repo.deleteSessionsOf(accountId);
      onRevoke({ accountId, reason });
    },
  };
}

export type Sessions = ReturnType<typeof createSessions>;
