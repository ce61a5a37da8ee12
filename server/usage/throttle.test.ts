import { describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { fixedWindowThrottle } from './throttle.js';

describe('fixed-window throttle', () => {
  it('allows the limit per key and window, then refuses with the seconds left in the window', () => {
    const clock = manualClock();
    const throttle = fixedWindowThrottle({ limit: 3, windowMs: 60_000, clock });
    expect([1, 2, 3].map(() => throttle.hit('a').allowed)).toEqual([true, true, true]);
    clock.advance(20_500);
    expect(throttle.hit('a')).toEqual({ allowed: false, retryAfterSeconds: 40 });
    expect(throttle.hit('b').allowed).toBe(true);
  });

  it('starts a fresh window once the old one has ended', () => {
    const clock = manualClock();
    const throttle = fixedWindowThrottle({ limit: 1, windowMs: 1000, clock });
    expect(throttle.hit('a').allowed).toBe(true);
    expect(throttle.hit('a').allowed).toBe(false);
    clock.advance(1000);
    expect(throttle.hit('a').allowed).toBe(true);
  });

  it('keeps at most maxKeys windows, dropping expired ones first, so a flood of addresses cannot grow memory', () => {
    const clock = manualClock();
    const throttle = fixedWindowThrottle({ limit: 1, windowMs: 1000, clock, maxKeys: 3 });
    throttle.hit('old');
    clock.advance(1000);
    throttle.hit('a');
    throttle.hit('b');
    throttle.hit('c');
    expect(throttle.size).toBe(3);
    for (let i = 0; i < 100; i++) throttle.hit(`flood-${i}`);
    expect(throttle.size).toBeLessThanOrEqual(3);
  });
});
