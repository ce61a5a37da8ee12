import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.js';
import { createJobsBackup } from './backup.js';

describe('the jobs’ rows for a backup (server/jobs/backup.ts)', () => {
  it('exports what it imported, a run still going ended as interrupted; imports only inside a transaction', () => {
    const db = openDatabase(':memory:');
    const rows = createJobsBackup(db);
    const job = { id: 7, key: 'tailscale_sync', name: 'Tailscale', description: '', enabled: 1, schedule: 30, config: { tailnet: 'example.com' } } as const;
    const done = { id: 1, job_id: 7, started_at: '2026-11-22T09:00:00.000Z', ended_at: '2026-11-22T09:00:01.000Z', status: 'success', result: 'Updated 0 of 0 instances' } as const;
    const going = { id: 2, job_id: 7, started_at: '2026-11-22T09:30:00.000Z', ended_at: null, status: 'running', result: '' } as const;
    expect(() => rows.importRows([job], [done])).toThrow(/inside the import’s transaction/);
    expect(rows.exportJobs()).toEqual([]);

    db.transaction(() => rows.importRows([job], [done, going]))();
    expect(rows.exportJobs()).toEqual([job]);
    expect(rows.jobIds()).toEqual([7]);
    expect(rows.exportRuns()).toEqual([done, { ...going, ended_at: going.started_at, status: 'error', result: 'interrupted by restore' }]);
    // Runs alone replace the runs and keep the jobs.
    db.transaction(() => rows.importRows(undefined, [done]))();
    expect([rows.exportJobs(), rows.exportRuns()]).toEqual([[job], [done]]);
  });
});
