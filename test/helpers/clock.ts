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

/**
 * Failed sign-ins are counted in fixed windows on the wall clock (server/access/throttle.ts). A test of
 * a built server, which cannot take a manual clock, counts its failures within one window by running
 * that server's clock ahead to one second into the next window (startHeadless's `clockShiftMs`,
 * helpers/shifted-clock.mjs): it then has the whole window, whatever the minute, and no test waits.
 * Returns the shift and the server's "now", for codes and times the test computes.
 */
export function nextWindowClock(windowMs: number) {
  const shiftMs = windowMs - (Date.now() % windowMs) + 1_000;
  return { shiftMs, now: () => Date.now() + shiftMs };
}
