import type { Clock } from '../time.js';

/**
 * Short-lived sign-in state kept in memory: a password waiting for its second factor (keyed by the
 * SHA-256 of the pending cookie's token), a passkey registration, a challenge already used. Bounded:
 * past `max` the oldest goes, so only what a right password or a session creates is kept here; what
 * anonymous requests start travels in signed cookies instead (sealed.ts). A restart forgets them all,
 * which costs a person one more try and nothing else.
 */
export function createExpiringMap<V>(clock: Clock, ttlMs: number, max: number) {
  const entries = new Map<string, { value: V; expires: number }>();

  function prune(): void {
    const now = clock.now();
    // Insertion order is expiry order (one ttl for all), so the expired ones are at the front.
    for (const [key, entry] of entries) {
      if (entry.expires > now) break;
      entries.delete(key);
    }
  }

  return {
    put(key: string, value: V): void {
      prune();
      entries.delete(key);
      if (entries.size >= max) entries.delete(entries.keys().next().value!);
      entries.set(key, { value, expires: clock.now() + ttlMs });
    },
    get(key: string): V | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expires <= clock.now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    /** The entry, removed: a value that may be used once. */
    take(key: string): V | undefined {
      const value = this.get(key);
      entries.delete(key);
      return value;
    },
    delete(key: string): void {
      entries.delete(key);
    },
  };
}

export type ExpiringMap<V> = ReturnType<typeof createExpiringMap<V>>;
