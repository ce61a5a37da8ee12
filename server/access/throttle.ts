import type { Db } from '../db/database.js';
import type { Clock } from '../time.js';

export const WINDOW_MS = 15 * 60 * 1000;

/** PRODUCT.md's limits: failed attempts allowed per fixed 15-minute window. */
export const LIMITS = {
  'login.ip': 10,
  'login.user': 5,
  'setup.ip': 10,
  'password.account': 5,
  // failed agent authentications (enrollment, host and receipt tokens) per peer address
  'agent.ip': 60,
} as const;
export type ThrottleScope = keyof typeof LIMITS;

/**
 * Failed attempts counted in the database, so a restart does not reset them. Windows are fixed:
 * a window starts at a multiple of 15 minutes, and its count is dropped when the next one begins.
 */
export function createThrottle(db: Db, clock: Clock) {
  const get = db.prepare<[string, string], { window_start: number; failures: number }>(
    'SELECT window_start, failures FROM throttle WHERE scope = ? AND key = ?',
  );
  const fail = db.prepare<[string, string, number], void>(
    `INSERT INTO throttle (scope, key, window_start, failures) VALUES (?, ?, ?, 1)
     ON CONFLICT (scope, key) DO UPDATE SET
       failures = CASE WHEN window_start = excluded.window_start THEN failures + 1 ELSE 1 END,
       window_start = excluded.window_start`,
  );
  const prune = db.prepare<[number], void>('DELETE FROM throttle WHERE window_start < ?');
  const windowStart = () => Math.floor(clock.now() / WINDOW_MS) * WINDOW_MS;

  return {
    /** Seconds to wait when the key is over its limit in the current window, else 0. */
    retryAfter(scope: ThrottleScope, key: string): number {
      const start = windowStart();
      const row = get.get(scope, key);
      if (!row || row.window_start !== start || row.failures < LIMITS[scope]) return 0;
      return Math.ceil((start + WINDOW_MS - clock.now()) / 1000);
    },
    recordFailure(scope: ThrottleScope, key: string): void {
      const start = windowStart();
      fail.run(scope, key, start);
      prune.run(start);
    },
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
