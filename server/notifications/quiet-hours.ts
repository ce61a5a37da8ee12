import type { QuietHours } from '../contract/inputs/notifications.js';

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Minutes since midnight at `now` in `timezone`. */
function localMinutes(now: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: timezone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(now);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return get('hour') * 60 + get('minute');
}

/** Whether `now` falls in the window [start, end) local time; a window may run past midnight (22:00–07:00). */
export function inQuietHours(q: QuietHours | null | undefined, now: number): boolean {
  if (!q) return false;
  const at = localMinutes(now, q.timezone);
  const start = minutes(q.start);
  const end = minutes(q.end);
  return start < end ? at >= start && at < end : at >= start || at < end;
}
