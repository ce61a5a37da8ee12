/** Shapes of the API as the dashboard reads them; instances come straight from the server's types. */
export type { HistoryEntry, Instance } from '../server/registry/schema';
import type { JobRun, JobView } from '../server/jobs/schema';

// Repeated here as plain lists: importing the server's schema module would pull zod into the bundle.
export const STATES = ['deployed', 'testing', 'degraded'] as const;
export const STACKS = ['production', 'development'] as const;
export const FLAGS = ['atlas', 'argus', 'semaphore', 'patchmon', 'tailscale', 'andromeda', 'hardware_acceleration'] as const;

export type { JobRun } from '../server/jobs/schema';

/**
 * A job as GET /api/jobs lists it; GET /api/jobs/:id adds its last runs. `configured` and
 * `missing` (config fields still to set) come from servers that send them; jobConfig.ts works
 * them out otherwise.
 */
export type Job = JobView & { runs?: JobRun[]; configured?: boolean; missing?: string[] };

export const REDACTED = '**REDACTED**';
