import { describe, expect, it } from 'vitest';
import { BackupInstance, parseBackupInstance } from './schema.js';

const base = { vmid: 1, name: 'web', state: 'deployed', stack: 'production' };

describe('parseBackupInstance', () => {
  it.each([
    ['a minimal version 1 row', base],
    ['a full row', { ...base, tailscale_ip: '100.64.0.1', atlas: 1, argus: 0, semaphore: 1, patchmon: 0, tailscale: 1, andromeda: 0, hardware_acceleration: 1, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-02T00:00:00.5Z' }],
    ['a name that needs trimming', { ...base, name: '  web  ' }],
    ['unknown fields', { ...base, id: 9, extra: 'x' }],
    ['a bad address', { ...base, tailscale_ip: '010.0.0.1' }],
    ['a flag of 2', { ...base, atlas: 2 }],
    ['a flag as a string', { ...base, atlas: '1' }],
    ['a vmid of 0', { ...base, vmid: 0 }],
    ['a fractional vmid', { ...base, vmid: 1.5 }],
    ['an empty name', { ...base, name: '   ' }],
    ['an unknown state', { ...base, state: 'gone' }],
    ['a bad timestamp', { ...base, created_at: 'yesterday' }],
    ['not an object', 'row'],
    ['null', null],
  ])('gives what the zod schema gives for %s', (_label, row) => {
    const fast = parseBackupInstance(row);
    const slow = BackupInstance.safeParse(row);
    expect(fast.success).toBe(slow.success);
    if (fast.success && slow.success) expect(fast.data).toEqual(slow.data);
    if (!fast.success && !slow.success) expect(fast.error.issues).toEqual(slow.error.issues);
  });
});
