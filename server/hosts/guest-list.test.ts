import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { diffGuests, GUESTS_PER_TURN, hashGuests, normalizeGuests, readStoredGuests } from './guest-list.js';
import type { Guest } from '../contract/inputs/hosts.js';

const guest = (vmid: number, over: Partial<Guest> = {}): Guest => ({ vmid, name: `g${vmid}`, type: 'qemu', status: 'running', template: false, lock: null, ...over });
const many = (count: number) => Array.from({ length: count }, (_, i) => guest(100 + i, i % 3 ? {} : { config_sha256: 'a'.repeat(64), lock: 'backup' }));

describe('a heartbeat guest list', () => {
  it('is stored one guest per vmid, the last one listed winning, in vmid order', () => {
    expect(normalizeGuests([guest(300), guest(100, { status: 'stopped' }), guest(200), guest(100)])).toEqual([guest(100), guest(200), guest(300)]);
  });

  it('hashes a slice per turn to the digest of the whole list at once, so stored hashes still match', async () => {
    const list = many(2 * GUESTS_PER_TURN + 17);
    const whole = JSON.stringify(list.map((g) => [g.vmid, g.name, g.type, g.status, g.config_sha256 ?? null, g.template, g.lock]));
    expect(await hashGuests(list)).toBe(createHash('sha256').update(whole).digest('base64'));
    expect(await hashGuests([])).toBe(createHash('sha256').update('[]').digest('base64'));
  });

  it('differs from the stored one by the rows to write and the vmids to delete; a new or gone vmid moves host and status, a status change only the status', () => {
    const before = [guest(1), guest(2), guest(3), guest(4), guest(6)];
    const after = [guest(2, { status: 'stopped' }), guest(3, { name: 'renamed' }), guest(4), guest(5), guest(6, { lock: 'migrate' })];
    const changes = diffGuests(before, after);
    expect(changes.upserts).toEqual([after[0], after[1], after[3], after[4]]);
    expect(changes.deletes).toEqual([1]);
    expect(changes.moved).toEqual(new Map([[1, ['host', 'guest_status']], [2, ['guest_status']], [5, ['host', 'guest_status']]]));
    expect(diffGuests(after, after)).toEqual({ upserts: [], deletes: [], moved: new Map() });
  });

  it('is read back from storage a page per turn, with the hash of what was read', async () => {
    const stored = many(2 * GUESTS_PER_TURN);
    const asked: number[] = [];
    const read = await readStoredGuests((after, limit) => {
      asked.push(after);
      return stored.filter((g) => g.vmid > after).slice(0, limit);
    });
    expect(read).toEqual({ guests: stored, hash: await hashGuests(stored) });
    expect(asked).toEqual([-1, stored[GUESTS_PER_TURN - 1]!.vmid, stored.at(-1)!.vmid]);
  });
});
