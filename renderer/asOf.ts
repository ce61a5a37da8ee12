/** "As of": the registry as it was at an instant (GET /api/instances?at=). Pure; tested in asOf.test.ts. */
import type { HistoryEntry } from '../server/contract/registry';

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z$/;

/** An `at` from the URL, kept only when it is an instant in UTC as the page writes it; anything else is now (''). */
export function parseAt(value: string | null): string {
  return value && INSTANT.test(value) && !Number.isNaN(Date.parse(value)) ? value : '';
}

/**
 * A date-time input's value (`2026-11-22T10:15`, seconds optional) as an instant. The input is read
 * in UTC, as every exact time of the dashboard is shown; empty is now ('').
 */
export function inputToAt(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return '';
  const ms = Date.parse(`${value}Z`);
  return Number.isNaN(ms) ? '' : new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** The input's value for an instant (to the second), '' for now. */
export function atToInput(at: string): string {
  return at ? new Date(Date.parse(at)).toISOString().slice(0, 19) : '';
}

/**
 * The vmid an instance had at `at`, from its history (newest first) and its vmid now: the old value
 * of its first vmid change after `at`, as the server rebuilds every field.
 */
export function vmidAt(history: readonly Pick<HistoryEntry, 'field' | 'old_value' | 'changed_at'>[], now: number, at: string): number {
  const when = Date.parse(at);
  let vmid = now;
  for (const entry of history) {
    if (entry.field === 'vmid' && Date.parse(entry.changed_at) > when && entry.old_value !== null) vmid = Number(entry.old_value);
  }
  return vmid;
}
