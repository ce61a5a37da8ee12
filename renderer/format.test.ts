import { describe, expect, it } from 'vitest';
import { duration, exactTime, historyValue, plural, relativeTime } from './format';

const NOW = Date.parse('2026-11-22T10:15:00Z');

describe('relativeTime', () => {
  it('says "just now" within 45 seconds either way', () => {
    expect(relativeTime('2026-11-22T10:14:20Z', NOW)).toBe('just now');
    expect(relativeTime('2026-11-22T10:15:30Z', NOW)).toBe('just now');
  });
  it('counts minutes, hours, days and years, past and future', () => {
    expect(relativeTime('2026-11-22T10:10:00Z', NOW)).toBe('5 minutes ago');
    expect(relativeTime('2026-11-22T07:15:00Z', NOW)).toBe('3 hours ago');
    expect(relativeTime('2026-11-20T10:15:00Z', NOW)).toBe('2 days ago');
    expect(relativeTime('2024-11-22T10:15:00Z', NOW)).toBe('2 years ago');
    expect(relativeTime('2026-11-22T12:15:00Z', NOW)).toBe('in 2 hours');
  });
  it('says "never" for a missing time and passes through what it cannot read', () => {
    expect(relativeTime(null, NOW)).toBe('never');
    expect(relativeTime('yesterday', NOW)).toBe('yesterday');
  });
});

describe('exactTime', () => {
  it('shows the stored UTC time, keeping milliseconds when stored', () => {
    expect(exactTime('2026-11-22T10:15:00Z')).toBe('2026-11-22 10:15:00 UTC');
    expect(exactTime('2026-11-22T10:15:00.123Z')).toBe('2026-11-22 10:15:00.123 UTC');
    expect(exactTime(null)).toBe('—');
  });
});

describe('duration, historyValue, plural', () => {
  it('reads a run length, or "running" without an end', () => {
    expect(duration('2026-11-22T10:15:00.000Z', '2026-11-22T10:15:00.250Z')).toBe('250 ms');
    expect(duration('2026-11-22T10:15:00.000Z', '2026-11-22T10:15:02.500Z')).toBe('2.5 s');
    expect(duration('2026-11-22T10:15:00.000Z', null)).toBe('running');
  });
  it('shows null and empty history values distinctly', () => {
    expect(historyValue(null)).toBe('—');
    expect(historyValue('')).toBe('(empty)');
    expect(historyValue('testing')).toBe('testing');
  });
  it('pluralises with thousands separators', () => {
    expect(plural(1, 'instance')).toBe('1 instance');
    expect(plural(10000, 'instance')).toBe('10,000 instances');
  });
});
