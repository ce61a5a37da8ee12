import type { Clock } from '../time.js';

export interface ThrottleDecision {
  allowed: boolean;
  /** Seconds until the window of this key ends (when refused). */
  retryAfterSeconds: number;
}

export interface FixedWindowOptions {
  limit: number;
  windowMs: number;
  clock: Clock;
  /** Keys kept at most; expired windows are dropped first, so a flood of addresses cannot grow memory. */
  maxKeys?: number;
}

/** Counts hits per key in fixed windows that start at a key's first hit. */
export function fixedWindowThrottle({ limit, windowMs, clock, maxKeys = 10_000 }: FixedWindowOptions) {
  const windows = new Map<string, { start: number; count: number }>();

  function prune(now: number) {
    for (const [key, w] of windows) if (now - w.start >= windowMs) windows.delete(key);
    // Still full of live windows: forget the oldest (a Map iterates in insertion order).
    while (windows.size >= maxKeys) windows.delete(windows.keys().next().value!);
  }

  return {
    hit(key: string): ThrottleDecision {
      const now = clock.now();
      let w = windows.get(key);
      if (!w || now - w.start >= windowMs) {
        if (!w && windows.size >= maxKeys) prune(now);
        windows.delete(key);
        w = { start: now, count: 0 };
        windows.set(key, w);
      }
      w.count += 1;
      if (w.count <= limit) return { allowed: true, retryAfterSeconds: 0 };
      return { allowed: false, retryAfterSeconds: Math.ceil((w.start + windowMs - now) / 1000) };
    },
    get size() {
      return windows.size;
    },
  };
}
