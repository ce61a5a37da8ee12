import { describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { HttpError } from '../errors.js';
import { createHeartbeatLimit } from './heartbeat-limit.js';

const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return { status: err.status, retryAfter: err.headers['Retry-After'] };
    throw err;
  }
  return undefined;
};

describe('the heartbeat limit', () => {
  it('takes a burst of 5, then one per interval, saying when the next one is allowed', () => {
    const clock = manualClock();
    const limit = createHeartbeatLimit(clock, 30);
    for (let i = 0; i < 5; i++) expect(refusal(() => limit.take(1))).toBeUndefined();
    expect(refusal(() => limit.take(1))).toEqual({ status: 429, retryAfter: '30' });
    clock.advance(20_000);
    expect(refusal(() => limit.take(1))).toEqual({ status: 429, retryAfter: '10' });
    clock.advance(10_000);
    expect(refusal(() => limit.take(1))).toBeUndefined();
    // Another host has its own budget.
    expect(refusal(() => limit.take(2))).toBeUndefined();
  });

  it('an agent that beats once per interval is never refused, and refills to the burst, no further', () => {
    const clock = manualClock();
    const limit = createHeartbeatLimit(clock, 30);
    for (let i = 0; i < 100; i++) {
      expect(refusal(() => limit.take(1))).toBeUndefined();
      clock.advance(30_000);
    }
    clock.advance(3_600_000);
    for (let i = 0; i < 5; i++) expect(refusal(() => limit.take(1))).toBeUndefined();
    expect(refusal(() => limit.take(1))?.status).toBe(429);
  });
});
