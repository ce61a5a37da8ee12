import { describe, expect, it } from 'vitest';
import { computeDrift } from './drift.js';

describe('computeDrift', () => {
  it('lists guests with no instance, names that differ, and instances no guest has', () => {
    const guests = [
      { vmid: 100, name: 'web', type: 'qemu' as const, status: 'running' },
      { vmid: 101, name: 'db-new', type: 'lxc' as const, status: 'stopped' },
      { vmid: 102, name: 'same', type: 'lxc' as const, status: 'running' },
    ];
    const names = new Map([
      [101, 'db'],
      [102, 'same'],
    ]);
    expect(computeDrift(guests, names, [{ vmid: 300, name: 'gone' }])).toEqual([
      { kind: 'guest_without_instance', vmid: 100, guest_name: 'web', guest_type: 'qemu' },
      { kind: 'name_differs', vmid: 101, guest_name: 'db-new', instance_name: 'db' },
      { kind: 'instance_without_guest', vmid: 300, instance_name: 'gone' },
    ]);
  });

  it('is empty when the registry matches', () => {
    expect(computeDrift([{ vmid: 1, name: 'a', type: 'qemu', status: '' }], new Map([[1, 'a']]), [])).toEqual([]);
  });
});
