/** Pure presentation helpers for times and values; tested in format.test.ts. */
import { FLAGS } from '../server/contract/registry';

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

/** "5 minutes ago", "in 2 hours", "just now" (under 45 seconds either way). */
export function relativeTime(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never';
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const seconds = Math.round((at - now) / 1000);
  if (Math.abs(seconds) < 45) return 'just now';
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'always' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size * 0.95) return format.format(Math.round(seconds / size), unit);
  }
  return format.format(Math.round(seconds / 60) || (seconds < 0 ? -1 : 1), 'minute');
}

/** The exact UTC time as stored, made readable: "2026-11-22 10:15:00.123 UTC". */
export function exactTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d+)?)Z$/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

/** How long a run took, from its start and end. */
export function duration(startIso: string, endIso: string | null): string {
  if (!endIso) return 'running';
  const ms = Date.parse(endIso) - Date.parse(startIso);
  if (Number.isNaN(ms) || ms < 0) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** A history value for display: null is shown as an em dash, the empty string as "(empty)". */
export function historyValue(value: string | null): string {
  if (value === null) return '—';
  if (value === '') return '(empty)';
  return value;
}

/** "1 instance", "3 instances". */
export const plural = (count: number, noun: string): string => `${count.toLocaleString('en')} ${noun}${count === 1 ? '' : 's'}`;

/**
 * A server message as a sentence: capital first letter and a full stop, except that a first
 * word naming something in code (`tailscale_sync`, `api_url`) is kept as written.
 */
export function sentence(text: string): string {
  const first = text.split(/[\s:;,]/, 1)[0] ?? '';
  // "vmid already exists" is about a VMID, as the dashboard spells it everywhere else.
  const start = first === 'vmid' ? `VMID${text.slice(4)}` : first.includes('_') ? text : text.charAt(0).toUpperCase() + text.slice(1);
  return start + (/[.!?]$/.test(text) ? '' : '.');
}

/** How long a host has been up: "22 min" under an hour, "5 h 3 min" under a day, "3 d 4 h" after. */
export function uptime(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A heartbeat interval as said in a sentence: "10 s", "2 min", "90 s". */
export const interval = (seconds: number): string => (seconds >= 60 && seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);

const FIELD_LABELS: Record<string, string> = {
  vmid: 'VMID',
  name: 'Name',
  state: 'State',
  stack: 'Stack',
  tailscale_ip: 'Tailscale IP',
  atlas: 'Atlas',
  argus: 'Argus',
  semaphore: 'Semaphore',
  patchmon: 'PatchMon',
  tailscale: 'Tailscale',
  andromeda: 'Andromeda',
  hardware_acceleration: 'Hardware acceleration',
  tags: 'Tags',
};

/** An instance field as people name it: "tailscale_ip" → "Tailscale IP", "argus" → "Argus". */
export const fieldLabel = (field: string): string => FIELD_LABELS[field] ?? field;

const isFlag = (field: string) => (FLAGS as readonly string[]).includes(field);

/** One timeline change in words: a flag's 0/1 reads as off/on ("Argus: off → on"), other values as stored. */
export function historyChange(field: string, oldValue: string | null, newValue: string | null): { label: string; from: string; to: string } {
  const flag = (value: string | null) => (value === '1' ? 'on' : value === '0' ? 'off' : historyValue(value));
  // Tags are kept comma-joined: shown as a list, and no tags as "none".
  const tags = (value: string | null) => (value === '' ? 'none' : value === null ? '—' : value.split(',').join(', '));
  const show = isFlag(field) ? flag : field === 'tags' ? tags : historyValue;
  return { label: fieldLabel(field), from: show(oldValue), to: show(newValue) };
}
