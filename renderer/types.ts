/** Shapes of the API as the dashboard reads them; instances come straight from the server's types. */
export type { HistoryEntry, Instance } from '../server/registry/schema';

// Repeated here as plain lists: importing the server's schema module would pull zod into the bundle.
export const STATES = ['deployed', 'testing', 'degraded'] as const;
export const STACKS = ['production', 'development'] as const;
export const FLAGS = ['atlas', 'argus', 'semaphore', 'patchmon', 'tailscale', 'andromeda', 'hardware_acceleration'] as const;

export interface JobRun {
  id: number;
  job_id: number;
  started_at: string;
  ended_at: string | null;
  status: 'running' | 'success' | 'error';
  result: string;
}

export interface Job {
  id: number;
  key: string;
  name: string;
  description: string;
  enabled: number | boolean;
  schedule: number;
  config: Record<string, unknown>;
  last_run_at?: string | null;
  last_status?: string | null;
  last_run_id?: number | null;
  runs?: JobRun[];
}

export const REDACTED = '**REDACTED**';
