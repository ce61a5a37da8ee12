import { describe, expect, it } from 'vitest';
import { parseInstant } from './instant.js';

describe('parseInstant', () => {
  it('reads an instant in UTC or with an offset, to the millisecond', () => {
    expect(parseInstant('2026-11-22T10:15:00Z')).toBe(Date.parse('2026-11-22T10:15:00Z'));
    expect(parseInstant('2026-11-22T10:15:00.123Z')).toBe(Date.parse('2026-11-22T10:15:00.123Z'));
    expect(parseInstant('2026-11-22T10:15:00.1239Z')).toBe(Date.parse('2026-11-22T10:15:00.123Z'));
    expect(parseInstant('2026-11-22T10:15Z')).toBe(Date.parse('2026-11-22T10:15:00Z'));
    expect(parseInstant('2026-11-22T11:15:00+01:00')).toBe(Date.parse('2026-11-22T10:15:00Z'));
    expect(parseInstant('2026-11-22T05:45:00-04:30')).toBe(Date.parse('2026-11-22T10:15:00Z'));
    expect(parseInstant('2024-02-29')).toBe(Date.parse('2024-02-29T00:00:00Z'));
    expect(parseInstant('0001-01-01T00:00:00Z')).toBe(Date.parse('0001-01-01T00:00:00Z'));
  });

  it('refuses what is not an instant, a time without its zone, and parts out of range', () => {
    for (const text of ['', 'now', 'yesterday', '1700000000', '2026-11-22T10:15:00', '2026-11-22 10:15:00Z', '2026-02-30T00:00:00Z', '2025-02-29', '2026-13-01T00:00:00Z', '2026-11-22T24:00:00Z', '2026-11-22T10:60:00Z', '2026-11-22T10:15:61Z', '2026-11-22T10:15:00+25:00', '2026-11-22T10:15:00Z ', '+002026-11-22T10:15:00Z']) {
      expect([text, parseInstant(text)]).toEqual([text, null]);
    }
  });
});
