import { createHash } from 'node:crypto';
import type { Guest } from '../contract/inputs/hosts.js';
import { nextTurn } from '../tasks.js';

/** Guests hashed or compared per turn of the event loop: a 10,000-guest list takes several turns. */
export const GUESTS_PER_TURN = 1000;

/** What a heartbeat's guest list changes in the stored one: rows to write, vmids to delete, and what moved for the registry. */
export interface GuestChanges {
  upserts: Guest[];
  deletes: number[];
  /** The vmids whose placement moves, with what moved (`host`, `guest_status`). */
  moved: Map<number, string[]>;
}

/** A reported list as it is stored: one guest per vmid (the last one listed wins), by vmid. */
export function normalizeGuests(reported: readonly Guest[]): Guest[] {
  return [...new Map(reported.map((g) => [g.vmid, g])).values()].sort((a, b) => a.vmid - b.vmid);
}

const tuple = (g: Guest) => JSON.stringify([g.vmid, g.name, g.type, g.status, g.config_sha256 ?? null, g.template, g.lock]);

/**
 * The stored `guests_hash` of a list in vmid order: the SHA-256 of the JSON array of each guest's
 * stored fields, fed a slice per turn (the same digest as hashing the whole array's text at once).
 */
export async function hashGuests(sorted: readonly Guest[]): Promise<string> {
  const hash = createHash('sha256').update('[');
  for (let from = 0; from < sorted.length; from += GUESTS_PER_TURN) {
    if (from > 0) await nextTurn();
    const slice = sorted.slice(from, from + GUESTS_PER_TURN).map(tuple).join(',');
    hash.update(from > 0 ? `,${slice}` : slice);
  }
  return hash.update(']').digest('base64');
}

/** Every stored field alike (as `tuple` writes them). */
const same = (a: Guest, b: Guest) =>
  a.name === b.name && a.type === b.type && a.status === b.status && (a.config_sha256 ?? null) === (b.config_sha256 ?? null) && a.template === b.template && (a.lock ?? null) === (b.lock ?? null);

/**
 * Stored (`before`) and reported (`after`) lists, both by vmid: the rows that differ, those gone, and
 * the registry's moves (a new or gone vmid moves host and status, a changed status only the status).
 */
export function diffGuests(before: readonly Guest[], after: readonly Guest[]): GuestChanges {
  const changes: GuestChanges = { upserts: [], deletes: [], moved: new Map() };
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const old = before[i];
    const now = after[j];
    if (now === undefined || (old !== undefined && old.vmid < now.vmid)) {
      changes.deletes.push(old!.vmid);
      changes.moved.set(old!.vmid, ['host', 'guest_status']);
      i++;
    } else if (old === undefined || now.vmid < old.vmid) {
      changes.upserts.push(now);
      changes.moved.set(now.vmid, ['host', 'guest_status']);
      j++;
    } else {
      if (!same(old, now)) changes.upserts.push(now);
      if (old.status !== now.status) changes.moved.set(now.vmid, ['guest_status']);
      i++;
      j++;
    }
  }
  return changes;
}

/**
 * A host's stored guests, read a page per turn (outside any transaction), with their hash: the
 * transaction that uses them checks that the host's `guests_hash` is still that hash.
 */
export async function readStoredGuests(page: (afterVmid: number, limit: number) => Guest[]): Promise<{ guests: Guest[]; hash: string }> {
  const guests: Guest[] = [];
  for (let rows = page(-1, GUESTS_PER_TURN); rows.length > 0; rows = page(rows.at(-1)!.vmid, GUESTS_PER_TURN)) {
    guests.push(...rows);
    if (rows.length < GUESTS_PER_TURN) break;
    await nextTurn();
  }
  return { guests, hash: await hashGuests(guests) };
}
