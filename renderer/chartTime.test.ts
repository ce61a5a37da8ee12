import { describe, expect, it } from 'vitest';
import { utcLegendTime, utcTickLabels } from './chartTime';

const at = (iso: string) => Date.parse(iso) / 1000;

describe('chart times', () => {
  it('labels ticks within a day in 24-hour UTC, the date under the first and under midnight', () => {
    const ticks = ['2026-11-22T22:00:00Z', '2026-11-22T23:00:00Z', '2026-11-23T00:00:00Z', '2026-11-23T13:00:00Z'].map(at);
    expect(utcTickLabels(ticks, 3600)).toEqual(['22:00\n11-22', '23:00', '00:00\n11-23', '13:00']);
  });

  it('labels ticks a day or more apart by date', () => {
    expect(utcTickLabels([at('2026-11-22T00:00:00Z'), at('2026-11-29T00:00:00Z')], 7 * 86_400)).toEqual(['11-22', '11-29']);
  });

  it('gives a legend the whole UTC time, or the date for daily data', () => {
    expect(utcLegendTime(at('2026-11-22T15:04:00Z'))).toBe('2026-11-22 15:04 UTC');
    expect(utcLegendTime(at('2026-11-22T00:00:00Z'), true)).toBe('2026-11-22');
    expect(utcLegendTime(null)).toBe('—');
  });
});
