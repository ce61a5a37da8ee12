import type { Db } from '../db/database.js';
import type { JobKey, JobRun, RunStatus } from '../contract/jobs.js';
import { RUNS_KEPT, type JobRow } from './schema.js';

export type JobRepo = ReturnType<typeof createJobRepo>;

export interface JobWithLastRun extends JobRow {
  last_run_at: string | null;
  last_status: RunStatus | null;
  last_run_id: number | null;
}

const LAST_RUN = `(SELECT r.id FROM job_runs r WHERE r.job_id = j.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1)`;

/** SQL of the jobs feature, statements prepared once. */
export function createJobRepo(db: Db) {
  const withLastRun = `SELECT j.id, j.key, j.name, j.description, j.enabled, j.schedule, j.config,
      lr.started_at AS last_run_at, lr.status AS last_status, lr.id AS last_run_id
    FROM jobs j LEFT JOIN job_runs lr ON lr.id = ${LAST_RUN}`;
  const list = db.prepare<[], JobWithLastRun>(`${withLastRun} ORDER BY j.id`);
  const byId = db.prepare<[number], JobWithLastRun>(`${withLastRun} WHERE j.id = ?`);
  const seed = db.prepare<[JobKey, string, string, number]>(
    `INSERT INTO jobs (key, name, description, enabled, schedule, config) VALUES (?, ?, ?, 0, ?, '{}')
     ON CONFLICT (key) DO NOTHING`,
  );
  const update = db.prepare<[number, number, string, number]>('UPDATE jobs SET enabled = ?, schedule = ?, config = ? WHERE id = ?');
  const runs = db.prepare<[number, number], JobRun>(
    'SELECT id, job_id, started_at, ended_at, status, result FROM job_runs WHERE job_id = ? ORDER BY started_at DESC, id DESC LIMIT ?',
  );
  const startRun = db.prepare<[number, string]>("INSERT INTO job_runs (job_id, started_at, status, result) VALUES (?, ?, 'running', '')");
  const finishRun = db.prepare<[string, RunStatus, string, number]>('UPDATE job_runs SET ended_at = ?, status = ?, result = ? WHERE id = ?');
  const closeInterrupted = db.prepare<[string, string]>(
    "UPDATE job_runs SET ended_at = ?, status = 'error', result = ? WHERE status = 'running'",
  );
  const prune = db.prepare<[number, number, number]>(
    `DELETE FROM job_runs WHERE job_id = ? AND id NOT IN (
       SELECT id FROM job_runs WHERE job_id = ? ORDER BY started_at DESC, id DESC LIMIT ?)`,
  );
  const jobIds = db.prepare<[], { id: number }>('SELECT id FROM jobs');
  const lastSuccesses = db.prepare<[], { key: JobKey; at: string | null }>(
    "SELECT j.key, (SELECT max(r.ended_at) FROM job_runs r WHERE r.job_id = j.id AND r.status = 'success') AS at FROM jobs j ORDER BY j.key",
  );
  const runResult = db.prepare<[number], string>('SELECT result FROM job_runs WHERE id = ?').pluck();
  // Asked on every create; a stored config is a JSON object written by the service, so `true` reads back as 1.
  const anyRunOnCreate = db.prepare<[], { found: number }>("SELECT 1 AS found FROM jobs WHERE json_extract(config, '$.run_on_create') IS 1 LIMIT 1");

  return {
    list: () => list.all(),
    /** Whether any job is set to run when an instance is created (a cheap check, made on every create). */
    anyRunOnCreate: () => anyRunOnCreate.get() !== undefined,
    findById: (id: number) => byId.get(id),
    seed: (key: JobKey, name: string, description: string, schedule: number) => void seed.run(key, name, description, schedule),
    update: (id: number, enabled: 0 | 1, schedule: number, config: string) => void update.run(enabled, schedule, config, id),
    runs: (jobId: number, limit = RUNS_KEPT) => runs.all(jobId, limit),
    /** Per job, when a run of it last ended in success. */
    lastSuccesses: () => lastSuccesses.all(),
    runResult: (runId: number): string | undefined => runResult.get(runId),
    startRun: (jobId: number, at: string) => Number(startRun.run(jobId, at).lastInsertRowid),
    finishRun: (runId: number, at: string, status: RunStatus, result: string) => void finishRun.run(at, status, result, runId),
    closeInterrupted: (at: string, result: string) => closeInterrupted.run(at, result).changes,
    prune: (jobId: number) => void prune.run(jobId, jobId, RUNS_KEPT),
    pruneAll: db.transaction(() => {
      for (const { id } of jobIds.all()) prune.run(id, id, RUNS_KEPT);
    }),
  };
}
