import { WEEKDAYS, type MaintenanceWindow, type Weekday } from '../contract/inputs/operations.js';

/** The server's own time zone: a policy without one is read in it. */
export const serverTimeZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    formats.set(timeZone, format);
  }
  return format;
}

/** An IANA zone Intl knows (`Europe/Berlin`, `UTC`); an unknown name makes Intl throw. */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+/-]{0,63}$/.test(name)) return false;
  try {
    formatIn(name);
    return true;
  } catch {
    formats.delete(name);
    return false;
  }
}

/** The weekday and minute of the day at `ms` on the wall clocks of `timeZone`. */
export function localTime(ms: number, timeZone: string): { day: Weekday; minute: number } {
  const parts = formatIn(timeZone).formatToParts(ms);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = get('weekday').toLowerCase().slice(0, 3) as Weekday;
  return { day, minute: Number(get('hour')) * 60 + Number(get('minute')) };
}

const minuteOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const dayBefore = (day: Weekday): Weekday => WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7]!;

/**
 * Whether one of the windows is open at `ms`. A window opens at `start` on each of its days and closes
 * at `end` the same day, or the next day when `end` is not after `start` (22:00–02:00 on a Saturday
 * runs into Sunday; 00:00–00:00 is the whole day).
 */
export function windowOpen(windows: readonly MaintenanceWindow[], timeZone: string, ms: number): boolean {
  const { day, minute } = localTime(ms, timeZone);
  return windows.some((w) => {
    const start = minuteOf(w.start);
    const end = minuteOf(w.end);
    if (start < end) return w.days.includes(day) && minute >= start && minute < end;
    return (w.days.includes(day) && minute >= start) || (w.days.includes(dayBefore(day)) && minute < end);
  });
}
