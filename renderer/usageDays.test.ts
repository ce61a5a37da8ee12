import { describe, expect, it } from 'vitest';
import { everyDay } from './usageDays';

describe('everyDay', () => {
  it('spans every day from since to today, zeros where no report came', () => {
    const days = [{ day: '2026-11-23', done: 3, failed: 1, stuck: 0, installing: 2 }];
    const all = everyDay(days, '2026-08-25T09:30:00Z', new Date('2026-11-23T12:00:00Z'));
    expect(all).toHaveLength(91);
    expect(all[0]).toEqual({ day: '2026-08-25', done: 0, failed: 0, stuck: 0, installing: 0 });
    expect(all.at(-1)).toEqual(days[0]);
    expect(new Set(all.map((d) => d.day)).size).toBe(91);
  });

  it('keeps the server counts of each day', () => {
    const days = [
      { day: '2026-11-21', done: 1, failed: 0, stuck: 0, installing: 0 },
      { day: '2026-11-22', done: 0, failed: 2, stuck: 1, installing: 0 },
    ];
    expect(everyDay(days, '2026-11-20T00:00:00Z', new Date('2026-11-22T23:59:00Z')).map((d) => d.done + d.failed + d.stuck)).toEqual([0, 1, 3]);
  });
});
