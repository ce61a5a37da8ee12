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
 * Failed sign-ins are counted in fixed windows on the wall clock (server/access/throttle.ts). A test
 * of a separate server process, which cannot take a manual clock, counts its failures within one
 * window: when fewer than `needMs` are left of the current one, this waits for the next to begin.
 */
export async function clearOfWindowEdge(windowMs: number, needMs = 60_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
