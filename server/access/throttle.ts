import type { Db } from '../db/database.js';
import type { Clock } from '../time.js';

export const WINDOW_MS = 15 * 60 * 1000;

/** PRODUCT.md's limits: failed attempts allowed per fixed 15-minute window. */
export const LIMITS = {
  'login.ip': 10,
  'login.user': 5,
  'setup.ip': 10,
  'password.account': 5,
  // Failed personal API token checks per peer address, like failed logins (server/tokens).
  'token.ip': 10,
  // failed agent authentications (enrollment, host and receipt tokens) per peer address
  'agent.ip': 60,
} as const;
export type ThrottleScope = keyof typeof LIMITS;
export type ThrottleKey = readonly [scope: ThrottleScope, key: string];

/**
 * Failed attempts counted in the database, so a restart does not reset them. Windows are fixed:
 * a window starts at a multiple of 15 minutes, and its count is dropped when the next one begins.
 *
 * An attempt takes its slot (counts as a failure) before any password is hashed, in the same
 * transaction as the check, and gives it back when it succeeds. Checking first and counting after
 * the hash let a burst of parallel attempts all pass the check while the hashes ran.
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
  const giveBack = db.prepare<[string, string, number], void>(
    'UPDATE throttle SET failures = failures - 1 WHERE scope = ? AND key = ? AND window_start = ? AND failures > 0',
  );
  const prune = db.prepare<[number], void>('DELETE FROM throttle WHERE window_start < ?');
  const windowStart = () => Math.floor(clock.now() / WINDOW_MS) * WINDOW_MS;

  function retryAfter(scope: ThrottleScope, key: string): number {
    const start = windowStart();
    const row = get.get(scope, key);
    if (!row || row.window_start !== start || row.failures < LIMITS[scope]) return 0;
    return Math.ceil((start + WINDOW_MS - clock.now()) / 1000);
  }

  /** One failure for each key in the current window; windows that have ended are dropped once. */
  function recordFailures(keys: readonly ThrottleKey[]): void {
    const start = windowStart();
    for (const [scope, key] of keys) fail.run(scope, key, start);
    prune.run(start);
  }

  /** All or nothing: when any key is over its limit nothing is taken and the wait in seconds is returned, else 0. */
  // Immediate, as every writing transaction (server/db/tx.ts): it reads the counts, then writes.
  const take = db.transaction((keys: readonly ThrottleKey[]): number => {
    const wait = Math.max(0, ...keys.map(([scope, key]) => retryAfter(scope, key)));
    if (wait > 0) return wait;
    recordFailures(keys);
    return 0;
  });

  return {
    /** Seconds to wait when the key is over its limit in the current window, else 0. */
    retryAfter,
    recordFailure: (scope: ThrottleScope, key: string): void => recordFailures([[scope, key]]),
    take: (keys: readonly ThrottleKey[]): number => take.immediate(keys),
    /** A successful attempt returns the slot it took (only within the window it was taken in). */
    release: db.transaction((keys: readonly ThrottleKey[]): void => {
      const start = windowStart();
      for (const [scope, key] of keys) giveBack.run(scope, key, start);
    }),
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
