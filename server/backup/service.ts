import type { ZodError } from 'zod';
import type { AppContext } from '../context.js';
import { badRequest, validationFailed } from '../errors.js';
import { fieldErrors, isPlainObject } from '../http/validate.js';
import { parseStoredConfig, type JobKey, type JobRun } from '../jobs/schema.js';
import type { Instance } from '../registry/schema.js';
import { isoMillis, isoSeconds } from '../time.js';
import { BACKUP_VERSION, BackupJob, BackupRun, parseBackupInstance, type BackupInstance } from './schema.js';

const INSTANCE_COLUMNS =
  'vmid, name, state, stack, tailscale_ip, atlas, argus, semaphore, patchmon, tailscale, andromeda, hardware_acceleration, created_at, updated_at';

export interface BackupDocument {
  version: number;
  exported_at: string;
  instances: Instance[];
  jobs: Array<{ id: number; key: JobKey; name: string; description: string; enabled: 0 | 1; schedule: number; config: Record<string, unknown> }>;
  job_runs: JobRun[];
}

export type BackupService = ReturnType<typeof createBackupService>;

/**
 * Validates each row with `schema`; the first bad row rejects the import with its index in
 * every field name (`instances.41.vmid`). Nothing is written before every row passed.
 */
type RowParser<T> = (row: unknown) => { success: true; data: T } | { success: false; error: ZodError };

function validateRows<T>(rows: unknown[], parse: RowParser<T>, section: string): T[] {
  const out = new Array<T>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const result = parse(rows[i]);
    if (!result.success) {
      throw validationFailed(fieldErrors(result.error).map((e) => ({ field: e.field === 'body' ? `${section}.${i}` : `${section}.${i}.${e.field}`, message: e.message })));
    }
    out[i] = result.data;
  }
  return out;
}

function rejectDuplicates<T>(rows: T[], section: string, field: string, value: (row: T) => unknown): void {
  const seen = new Map<unknown, number>();
  for (let i = 0; i < rows.length; i++) {
    const v = value(rows[i]!);
    const first = seen.get(v);
    if (first !== undefined) throw validationFailed([{ field: `${section}.${i}.${field}`, message: `duplicates ${section}.${first}` }]);
    seen.set(v, i);
  }
}

/** The JSON backup: export everything; import replaces instances (and jobs and runs when present) in one transaction. */
export function createBackupService({ db, clock, events }: Pick<AppContext, 'db' | 'clock' | 'events'>) {
  const selectInstances = db.prepare<[], Instance>(`SELECT ${INSTANCE_COLUMNS} FROM instances ORDER BY id`);
  const selectJobs = db.prepare<[], BackupDocument['jobs'][number] & { config: string }>(
    'SELECT id, key, name, description, enabled, schedule, config FROM jobs ORDER BY id',
  );
  const selectRuns = db.prepare<[], JobRun>('SELECT id, job_id, started_at, ended_at, status, result FROM job_runs ORDER BY id');
  const jobIds = db.prepare<[], { id: number }>('SELECT id FROM jobs');

  const insertInstance = db.prepare(
    `INSERT INTO instances (${INSTANCE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const deleteHistory = db.prepare('DELETE FROM instance_history');
  const deleteInstances = db.prepare('DELETE FROM instances');
  const historyForAll = db.prepare<[string]>(
    "INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by) SELECT id, 'imported', NULL, NULL, ?, 'import' FROM instances ORDER BY id",
  );
  const deleteRuns = db.prepare('DELETE FROM job_runs');
  const deleteJobs = db.prepare('DELETE FROM jobs');
  const insertJob = db.prepare('INSERT INTO jobs (id, key, name, description, enabled, schedule, config) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const insertRun = db.prepare('INSERT INTO job_runs (id, job_id, started_at, ended_at, status, result) VALUES (?, ?, ?, ?, ?, ?)');

  const replaceAll = db.transaction((instances: BackupInstance[], jobs: BackupJob[] | undefined, runs: BackupRun[] | undefined, now: number) => {
    deleteHistory.run();
    deleteInstances.run();
    const at = isoSeconds(now);
    for (const i of instances) {
      insertInstance.run(
        i.vmid, i.name, i.state, i.stack, i.tailscale_ip, i.atlas, i.argus, i.semaphore, i.patchmon, i.tailscale,
        i.andromeda, i.hardware_acceleration, i.created_at ?? at, i.updated_at ?? i.created_at ?? at,
      );
    }
    historyForAll.run(isoMillis(now));
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
  });

  return {
    exportDocument(): BackupDocument {
      return {
        version: BACKUP_VERSION,
        exported_at: isoMillis(clock.now()),
        instances: selectInstances.all(),
        jobs: selectJobs.all().map((job) => ({ ...job, config: parseStoredConfig(job.config) })),
        job_runs: selectRuns.all(),
      };
    },

    /** Validates every row, then replaces in one transaction. Returns the number of instances imported. */
    importDocument(body: unknown): { imported: number } {
      if (!isPlainObject(body) || !Array.isArray(body.instances)) {
        throw validationFailed([{ field: 'instances', message: 'must be an array of instances' }]);
      }
      const version = body.version ?? 1;
      if (!Number.isInteger(version) || (version as number) < 1 || (version as number) > BACKUP_VERSION) {
        throw badRequest('unsupported backup version');
      }
      for (const section of ['jobs', 'job_runs'] as const) {
        if (body[section] !== undefined && body[section] !== null && !Array.isArray(body[section])) {
          throw validationFailed([{ field: section, message: 'must be an array' }]);
        }
      }
      const instances = validateRows(body.instances, parseBackupInstance, 'instances');
      rejectDuplicates(instances, 'instances', 'vmid', (i) => i.vmid);
      const jobs = Array.isArray(body.jobs) ? validateRows(body.jobs, (row) => BackupJob.safeParse(row), 'jobs') : undefined;
      if (jobs) {
        rejectDuplicates(jobs, 'jobs', 'id', (j) => j.id);
        rejectDuplicates(jobs, 'jobs', 'key', (j) => j.key);
      }
      const runs = Array.isArray(body.job_runs) ? validateRows(body.job_runs, (row) => BackupRun.safeParse(row), 'job_runs') : undefined;
      if (runs) {
        rejectDuplicates(runs, 'job_runs', 'id', (r) => r.id);
        const known = new Set(jobs ? jobs.map((j) => j.id) : jobIds.all().map((j) => j.id));
        const orphan = runs.findIndex((r) => !known.has(r.job_id));
        if (orphan >= 0) throw validationFailed([{ field: `job_runs.${orphan}.job_id`, message: 'names no job' }]);
      }
      replaceAll(instances, jobs, runs, clock.now());
      events.emit('backup.imported');
      return { imported: instances.length };
    },
  };
}
