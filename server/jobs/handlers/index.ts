import type { JobKey } from '../../contract/jobs.js';
import { patchmonSync } from './patchmon.js';
import { semaphoreSync } from './semaphore.js';
import { tailscaleSync } from './tailscale.js';
import type { JobHandler } from './types.js';

/** Which function runs each job; the scheduler and the service know jobs only by this table. */
export const JOB_HANDLERS: Record<JobKey, JobHandler> = {
  tailscale_sync: tailscaleSync,
  patchmon_sync: patchmonSync,
  semaphore_sync: semaphoreSync,
};
