/** One background task as GET /api/health/tasks shows it: times are ISO 8601, null when it never happened. */
export interface TaskStatus {
  name: string;
  /** Milliseconds between runs; null for a task that runs once at a time (`at`). */
  interval_ms: number | null;
  running: boolean;
  runs: number;
  failures: number;
  /** Runs that fell due while the one before was still going, and were left out. */
  skipped: number;
  last_started_at: string | null;
  last_ended_at: string | null;
  last_failed_at: string | null;
  next_run_at: string | null;
}

/** GET /api/health/tasks: what failed is in the server's log, by the task's name, not here. */
export interface TaskList {
  tasks: TaskStatus[];
}
