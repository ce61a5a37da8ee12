import { describe, expect, it } from 'vitest';
import { computeDrift, driftCounts, refusalOf } from './drift.js';
import type { Guest } from '../contract/hosts.js';
import type { InstanceRef } from './repo.js';

const guest = (vmid: number, name: string, type: Guest['type'] = 'qemu', status = ''): Guest => ({ vmid, name, type, status, template: false, lock: null });

const registered = (...list: [number, string, InstanceRef['stack']?][]) =>
  new Map(list.map(([vmid, name, stack = 'development']) => [vmid, { vmid, name, stack }]));

describe('computeDrift', () => {
  it('lists guests with no instance and names that differ', () => {
    const guests = [
      guest(100, 'web', 'qemu', 'running'),
      guest(101, 'db-new', 'lxc', 'stopped'),
      guest(102, 'same', 'lxc', 'running'),
    ];
    expect(computeDrift(guests, registered([101, 'db', 'production'], [102, 'same']))).toEqual([
      { kind: 'guest_without_instance', vmid: 100, guest_name: 'web', guest_type: 'qemu' },
      { kind: 'name_differs', vmid: 101, guest_name: 'db-new', instance_name: 'db', instance_stack: 'production' },
    ]);
  });

  it('is empty when the registry matches', () => {
    expect(computeDrift([guest(1, 'a')], registered([1, 'a']))).toEqual([]);
  });

  it('a vmid another host reports too is a conflict naming that host, whatever the registry says', () => {
    const guests = [guest(1, 'a'), guest(2, 'b')];
    const shared = new Map([
      [1, [{ id: 7, hostname: 'pve7' }]],
      [2, [{ id: 7, hostname: 'pve7' }]],
    ]);
    expect(computeDrift(guests, registered([1, 'a']), shared)).toEqual([
      { kind: 'conflict', vmid: 1, guest_name: 'a', instance_name: 'a', other_hosts: [{ id: 7, hostname: 'pve7' }] },
      { kind: 'conflict', vmid: 2, guest_name: 'b', instance_name: null, other_hosts: [{ id: 7, hostname: 'pve7' }] },
    ]);
  });

  it('a template is never drift: not a guest without instance, not a rename, not a conflict', () => {
    const template = { ...guest(9000, 'debian-12-template'), template: true };
    const named = { ...guest(9001, 'ubuntu-template'), template: true };
    const shared = new Map([[9000, [{ id: 7, hostname: 'pve7' }]]]);
    expect(computeDrift([template, named, guest(100, 'web')], registered([9001, 'old-name']), shared)).toEqual([
      { kind: 'guest_without_instance', vmid: 100, guest_name: 'web', guest_type: 'qemu' },
    ]);
  });
});

describe('refusalOf', () => {
  const rename = (stack: InstanceRef['stack']) => ({ kind: 'name_differs' as const, vmid: 1, guest_name: 'x', instance_name: 'y', instance_stack: stack });

  it('never applies a conflict', () => {
    const conflict = { kind: 'conflict' as const, vmid: 1, guest_name: 'x', instance_name: null, other_hosts: [{ id: 3, hostname: 'pve3' }] };
    expect(refusalOf(conflict, true)).toBe('also reported by pve3 (host 3): not applied until only one host reports it');
    expect(refusalOf(conflict, false)).toBeDefined();
  });

  it('renames a production instance only when its own item is applied', () => {
    expect(refusalOf(rename('production'), false)).toBe('a production instance is renamed only by applying its own item');
    expect(refusalOf(rename('production'), true)).toBeUndefined();
    expect(refusalOf(rename('development'), false)).toBeUndefined();
  });
});

describe('driftCounts (the host list)', () => {
  it('counts as computeDrift does: every guest, drift for a missing instance, a differing name or a shared vmid, never a template; one registry read', () => {
    const asked: number[][] = [];
    const instancesOf = (vmids: readonly number[]) => (asked.push([...vmids]), [...registered([100, 'web'], [101, 'db'], [103, 'shared']).values()].filter((i) => vmids.includes(i.vmid)));
    const fact = (host_id: number, vmid: number, name: string, more: { template?: 0 | 1; shared?: 0 | 1 } = {}) => ({ host_id, vmid, name, template: 0 as const, shared: 0 as const, ...more });
    const counts = driftCounts([
      fact(1, 100, 'web'),
      fact(1, 101, 'db-renamed'),
      fact(1, 102, 'new'),
      fact(1, 9000, 'template', { template: 1 }),
      fact(2, 103, 'shared', { shared: 1 }),
      fact(2, 100, 'web'),
    ], instancesOf);
    expect(Object.fromEntries(counts)).toEqual({ 1: { guests: 4, drift: 2 }, 2: { guests: 2, drift: 1 } });
    expect(asked).toEqual([[100, 101, 102, 9000, 103]]);
  });
});
