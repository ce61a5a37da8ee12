import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.js';
import { createJobRepo } from './repo.js';

describe('what monitoring reads of the jobs (server/monitoring/ asks through the job service)', () => {
  it('per job key, when a run last ended in success, whatever failed or is going since; and a run’s result', () => {
    const db = openDatabase(':memory:');
    const repo = createJobRepo(db);
    repo.seed('tailscale_sync', 'Tailscale', '', 15);
    repo.seed('patchmon_sync', 'PatchMon', '', 15);
    const tailscale = repo.list().find((j) => j.key === 'tailscale_sync')!.id;
    const ok = repo.startRun(tailscale, '2026-11-22T09:00:00.000Z');
    repo.finishRun(ok, '2026-11-22T09:00:02.000Z', 'success', 'Updated 1 of 3 instances');
    const failed = repo.startRun(tailscale, '2026-11-22T10:00:00.000Z');
    repo.finishRun(failed, '2026-11-22T10:00:01.000Z', 'error', 'Tailscale answered 401');
    repo.startRun(tailscale, '2026-11-22T11:00:00.000Z');
    expect(repo.lastSuccesses()).toEqual([
      { key: 'patchmon_sync', at: null },
      { key: 'tailscale_sync', at: '2026-11-22T09:00:02.000Z' },
    ]);
    expect([repo.runResult(failed), repo.runResult(9999)]).toEqual(['Tailscale answered 401', undefined]);
  });
});
