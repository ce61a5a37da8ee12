const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** What `at` is told when it is not an instant. */
export const INSTANT_RULE = 'must be an ISO 8601 date and time with its zone, e.g. 2026-11-22T10:15:00Z (a date alone is its midnight UTC)';

/**
 * An ISO 8601 instant as milliseconds since the epoch, or null when `text` is not one. A time must
 * carry its zone (`Z` or `±hh:mm`): without one it would be read in the server's zone, which the
 * person asking may not share. A date alone is that day's midnight UTC. Fractions finer than a
 * millisecond are cut. Out-of-range parts are refused rather than rolled over, as Date.parse does
 * (it reads February 30 as March 2).
 */
export function parseInstant(text: string): number | null {
  const m = ISO_INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const millis = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const zone = m[8] ?? 'Z';
  const offsetHours = zone === 'Z' ? 0 : Number(zone.slice(1, 3));
  const offsetMinutes = zone === 'Z' ? 0 : Number(zone.slice(4, 6));
  if (month! < 1 || month! > 12 || hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day);
  if (date.getUTCMonth() !== month! - 1 || date.getUTCDate() !== day) return null;
  date.setUTCHours(hour, minute, second, millis);
  const sign = zone.startsWith('-') ? -1 : 1;
  return date.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
}
