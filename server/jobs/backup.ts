import type { BackupJob } from '../contract/backup.js';
import type { JobRun } from '../contract/jobs.js';
import type { Db } from '../db/database.js';
import { parseStoredConfig } from './schema.js';

export type JobsBackup = ReturnType<typeof createJobsBackup>;

/**
 * The jobs' tables as a backup carries them (server/backup asks for them through
 * server/services.ts): settings with their raw config, secrets included, and the runs.
 */
export function createJobsBackup(db: Db) {
  const selectJobs = db.prepare<[], Omit<BackupJob, 'config'> & { config: string }>(
    'SELECT id, key, name, description, enabled, schedule, config FROM jobs ORDER BY id',
  );
  const selectRuns = db.prepare<[], JobRun>('SELECT id, job_id, started_at, ended_at, status, result FROM job_runs ORDER BY id');
  const jobIds = db.prepare<[], number>('SELECT id FROM jobs').pluck();
  const deleteRuns = db.prepare('DELETE FROM job_runs');
  const deleteJobs = db.prepare('DELETE FROM jobs');
  const insertJob = db.prepare('INSERT INTO jobs (id, key, name, description, enabled, schedule, config) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const insertRun = db.prepare('INSERT INTO job_runs (id, job_id, started_at, ended_at, status, result) VALUES (?, ?, ?, ?, ?, ?)');

  return {
    exportJobs: (): BackupJob[] => selectJobs.all().map((job) => ({ ...job, config: parseStoredConfig(job.config) })),
    exportRuns: (): JobRun[] => selectRuns.all(),
    /** The ids runs may name when a backup brings runs without jobs. */
    jobIds: (): number[] => jobIds.all(),

    /**
     * Replaces the jobs when given (their runs go with them) and the runs when given. Only inside
     * the importer's transaction, which holds its audit entry too.
     */
    importRows(jobs: readonly BackupJob[] | undefined, runs: readonly JobRun[] | undefined): void {
      if (!db.inTransaction) throw new Error('jobs importRows runs only inside the import’s transaction');
      if (jobs) {
        deleteRuns.run();
        deleteJobs.run();
        for (const j of jobs) insertJob.run(j.id, j.key, j.name, j.description, j.enabled, j.schedule, JSON.stringify(j.config));
      }
      if (runs) {
        deleteRuns.run();
        for (const r of runs) {
          // A run that was going when the backup was taken will never finish here.
          const interrupted = r.status === 'running';
          insertRun.run(r.id, r.job_id, r.started_at, interrupted ? r.started_at : r.ended_at, interrupted ? 'error' : r.status,
            interrupted ? 'interrupted by restore' : r.result);
        }
      }
    },
  };
}
