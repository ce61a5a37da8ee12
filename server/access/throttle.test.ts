import { describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { openDatabase } from '../db/database.js';
import { createThrottle, LIMITS } from './throttle.js';

describe('throttle windows', () => {
  it('allows the limit of failures, then answers the seconds to the end of the fixed 15-minute window', () => {
    const clock = manualClock(Date.parse('2026-11-22T10:14:00.000Z'));
    const throttle = createThrottle(openDatabase(':memory:'), clock);
    for (let i = 0; i < LIMITS['login.user']; i++) {
      expect(throttle.retryAfter('login.user', 'bob')).toBe(0);
      throttle.recordFailure('login.user', 'bob');
    }
    expect(throttle.retryAfter('login.user', 'bob')).toBe(60);
    expect(throttle.retryAfter('login.user', 'alice')).toBe(0);
    expect(throttle.retryAfter('password.account', 'bob')).toBe(0);
    // Fixed windows: at 10:15 a new window starts and the count with it.
    clock.set(Date.parse('2026-11-22T10:15:00.000Z'));
    expect(throttle.retryAfter('login.user', 'bob')).toBe(0);
    throttle.recordFailure('login.user', 'bob');
    expect(throttle.retryAfter('login.user', 'bob')).toBe(0);
  });
});
