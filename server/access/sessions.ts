import type { Clock } from '../time.js';
import type { AccountRepo, AccountRow, SessionRow } from './repo.js';
import { newToken, sha256 } from './tokens.js';

export const ABSOLUTE_MS = 12 * 60 * 60 * 1000;
export const IDLE_MS = 30 * 60 * 1000;
/** Idle time is refreshed at most this often, so a busy dashboard does not write on every request. */
export const TOUCH_MS = 60 * 1000;

export interface ActiveSession {
  session: SessionRow;
  account: AccountRow;
}

export function createSessions(repo: AccountRepo, clock: Clock) {
  return {
    /** A new session for the account, replacing its previous ones ("one browser session per account"). Call inside a transaction. */
    issue(accountId: number): string {
      const token = newToken();
      repo.deleteSessionsOf(accountId);
      repo.insertSession(accountId, sha256(token), clock.now());
      return token;
    },

    /** The live session of a token, its idle time refreshed; expired sessions are deleted on sight. */
    resolve(token: string): ActiveSession | undefined {
      const found = repo.sessionByHash(sha256(token));
      if (!found) return undefined;
      const now = clock.now();
      const { account, ...session } = found;
      if (now >= session.created_at + ABSOLUTE_MS || now >= session.last_seen + IDLE_MS || !account.enabled) {
        repo.deleteSession(session.id);
        return undefined;
      }
      if (now - session.last_seen >= TOUCH_MS) {
        repo.touchSession(session.id, now);
        session.last_seen = now;
      }
      return { session, account };
    },

    revoke: (sessionId: number) => repo.deleteSession(sessionId),
    revokeAll: (accountId: number) => repo.deleteSessionsOf(accountId),
  };
}

export type Sessions = ReturnType<typeof createSessions>;
