import { liveEvent } from './events.js';

export const JOB_KEYS = ['tailscale_sync', 'patchmon_sync', 'semaphore_sync'] as const;
export type JobKey = (typeof JOB_KEYS)[number];
export const RUN_STATUSES = ['running', 'success', 'error'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

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
