import type { Clock } from '../../server/time.js';

/** A clock the test moves by hand. */
export function manualClock(start = Date.parse('2026-11-22T10:00:00.000Z')) {
  let now = start;
  return {
    now: () => now,
    set: (ms: number) => void (now = ms),
    advance: (ms: number) => void (now += ms),
  } satisfies Clock & Record<string, unknown>;
}
export type ManualClock = ReturnType<typeof manualClock>;
