import { describe, expect, it } from 'vitest';
import { isTimeZone, localTime, windowOpen } from './maintenance-windows.js';

// 2026-11-22 is a Sunday.
const at = (iso: string) => Date.parse(iso);

describe('maintenance windows', () => {
  it('reads the wall clock of the policy’s time zone, summer time included', () => {
    expect(localTime(at('2026-11-22T10:15:00Z'), 'UTC')).toEqual({ day: 'sun', minute: 10 * 60 + 15 });
    expect(localTime(at('2026-11-22T23:30:00Z'), 'Europe/Berlin')).toEqual({ day: 'mon', minute: 30 });
    expect(localTime(at('2026-07-01T12:00:00Z'), 'Europe/Berlin')).toEqual({ day: 'wed', minute: 14 * 60 });
    expect(localTime(at('2026-07-01T02:00:00Z'), 'America/New_York')).toEqual({ day: 'tue', minute: 22 * 60 });
  });

  it('is open from start (included) to end (excluded) on its days', () => {
    const windows = [{ days: ['sun' as const], start: '02:00', end: '04:00' }];
    expect(windowOpen(windows, 'UTC', at('2026-11-22T01:59:00Z'))).toBe(false);
    expect(windowOpen(windows, 'UTC', at('2026-11-22T02:00:00Z'))).toBe(true);
    expect(windowOpen(windows, 'UTC', at('2026-11-22T03:59:00Z'))).toBe(true);
    expect(windowOpen(windows, 'UTC', at('2026-11-22T04:00:00Z'))).toBe(false);
    // The same instant, another day in Tokyo.
    expect(windowOpen(windows, 'Asia/Tokyo', at('2026-11-22T02:00:00Z'))).toBe(false);
    expect(windowOpen(windows, 'Asia/Tokyo', at('2026-11-21T18:00:00Z'))).toBe(true);
  });

  it('runs past midnight into the next day when end is not after start; 00:00-00:00 is the whole day', () => {
    const overnight = [{ days: ['sat' as const], start: '22:00', end: '02:00' }];
    expect(windowOpen(overnight, 'UTC', at('2026-11-21T23:00:00Z'))).toBe(true);
    expect(windowOpen(overnight, 'UTC', at('2026-11-22T01:00:00Z'))).toBe(true);
    expect(windowOpen(overnight, 'UTC', at('2026-11-22T02:00:00Z'))).toBe(false);
    expect(windowOpen(overnight, 'UTC', at('2026-11-22T23:00:00Z'))).toBe(false);
    expect(windowOpen([{ days: ['sun'], start: '00:00', end: '00:00' }], 'UTC', at('2026-11-22T13:00:00Z'))).toBe(true);
    expect(windowOpen([{ days: ['mon'], start: '00:00', end: '00:00' }], 'UTC', at('2026-11-22T13:00:00Z'))).toBe(false);
  });

  it('knows IANA zones and refuses anything else', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
    expect(isTimeZone('Europe/Berlin; rm -rf /')).toBe(false);
  });
});
