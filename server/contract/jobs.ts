import { liveEvent } from './events.js';

export const JOB_KEYS = ['tailscale_sync', 'patchmon_sync', 'semaphore_sync'] as const;
export type JobKey = (typeof JOB_KEYS)[number];
export const RUN_STATUSES = ['running', 'success', 'error'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What a secret config field reads as; sending it back keeps the stored value. */
export const REDACTED = '**REDACTED**';
export const SECRET_FIELDS = ['api_key', 'api_token'] as const;

/** Config fields a run needs; without them it fails at once, contacting nothing. */
export const REQUIRED_CONFIG: Readonly<Record<JobKey, readonly string[]>> = {
  tailscale_sync: ['api_key'],
  patchmon_sync: ['api_url', 'api_token'],
  semaphore_sync: ['api_url', 'api_token'],
};

/** One run of a job, as GET /api/jobs/:id lists its last runs and a backup carries them. */
export interface JobRun {
  id: number;
  job_id: number;
  started_at: string;
  ended_at: string | null;
  status: RunStatus;
  result: string;
}

/** What names a job and says when it runs: the same in the API's view, a backup's row and the table. */
export interface JobBase {
  id: number;
  key: JobKey;
  name: string;
  description: string;
  enabled: 0 | 1;
  /** Minutes between scheduled runs. */
  schedule: number;
}

/** A job as GET /api/jobs lists it: config redacted, latest run summarised. */
export interface JobView extends JobBase {
  /** The config with each secret field set read as `**REDACTED**`. */
  config: Record<string, unknown>;
  /** Every required config field is set: a run can contact the remote service. */
  configured: boolean;
  /** The required config fields still unset, in the order the "not configured" error names them. */
  missing: string[];
  last_run_at: string | null;
  last_status: RunStatus | null;
  last_run_id: number | null;
}

/** GET /api/jobs/:id: the job and its last runs, newest first. */
export interface JobDetail extends JobView {
  runs: JobRun[];
}

/** POST /api/jobs/:id/run: the run's summary, once it ended. */
export interface RunAnswer {
  summary: string;
}

/** One field a run would change on one instance (a dry run's answer). */
export interface FieldChange {
  vmid: number;
  name: string;
  field: string;
  old: string | number;
  new: string | number;
}

/** POST /api/jobs/:id/run?dry_run=true */
export interface DryRun {
  summary: string;
  changes: FieldChange[];
}

/** A run as the live stream announces its start and its end. */
export interface JobRunEvent {
  job_id: number;
  job_key: JobKey;
  run_id: number;
  status: RunStatus;
  started_at: string;
  ended_at: string | null;
  result: string;
}

export const jobEvents = {
  'job.run.started': liveEvent<JobRunEvent>('fleet.read'),
  'job.run.finished': liveEvent<JobRunEvent>('fleet.read'),
};
