import { HttpError } from '../errors.js';
import type { Clock } from '../time.js';

/** Heartbeats one host may send back to back (an agent retries, restarts, upgrades) before it must wait. */
export const HEARTBEAT_BURST = 5;

/**
 * A token bucket per host: it holds up to HEARTBEAT_BURST heartbeats and refills one per heartbeat
 * interval, the rate an agent keeps. A host that sends more within one interval gets 429 with
 * Retry-After (the heartbeat of 10,000 changing guests is the costliest request a host can make).
 *
 * Kept in memory, not in the database: writing a row per heartbeat to count heartbeats would be the
 * very load this limit keeps off, and a restart forgets at most one burst per host. It is checked
 * and taken in one synchronous step, so parallel requests cannot both take the last heartbeat.
 */
export function createHeartbeatLimit(clock: Clock, intervalS: number, burst = HEARTBEAT_BURST) {
  const intervalMs = intervalS * 1000;
  const buckets = new Map<number, { tokens: number; at: number }>();

  return {
    /** Takes one heartbeat of the host's budget, or throws 429 saying when the next one is allowed. */
    take(hostId: number): void {
      const now = clock.now();
      const bucket = buckets.get(hostId) ?? { tokens: burst, at: now };
      bucket.tokens = Math.min(burst, bucket.tokens + Math.max(0, now - bucket.at) / intervalMs);
      bucket.at = now;
      buckets.set(hostId, bucket);
      if (bucket.tokens < 1) {
        const waitMs = Math.round((1 - bucket.tokens) * intervalMs);
        throw new HttpError(429, { error: 'too many heartbeats from this host' }, { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) });
      }
      bucket.tokens -= 1;
    },
  };
}
