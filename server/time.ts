/** Where "now" comes from; tests pass a clock they can move. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** `2026-11-22T10:15:00Z`: the one-second precision of created_at / updated_at. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

/** `2026-11-22T10:15:00.123Z`: the millisecond precision of changed_at, started_at, ended_at. */
export function isoMillis(ms: number): string {
  return new Date(ms).toISOString();
}
