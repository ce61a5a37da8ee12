import type { Task, Tasks } from '../tasks.js';
import type { Clock } from '../time.js';

export interface ScheduledJob {
  id: number;
  enabled: boolean;
  /** Minutes between runs. */
  schedule: number;
  /** When the job last started (ms), so a restart does not push a long interval further out. */
  lastRunAt?: number | null;
}

export interface SchedulerOptions {
  /** Starts a run; whether one is already going is the caller's business. */
  run: (jobId: number) => void;
  clock: Clock;
  /** Length of a schedule minute in ms; tests shorten it. */
  minuteMs?: number;
  /** The app's task runner: each armed job is a repeating task there (`jobs.schedule:<id>`). */
  tasks: Pick<Tasks, 'every'>;
}

/**
 * Runs enabled jobs every `schedule` minutes. Knows jobs only by id and interval. A job's
 * next run is one interval after its last start (at once when that is past), or one
 * interval after it was armed when it never ran.
 */
export class Scheduler {
  private readonly armed = new Map<number, { schedule: number; task: Task }>();
  private readonly minuteMs: number;
  private stopped = false;

  constructor(private readonly options: SchedulerOptions) {
    this.minuteMs = options.minuteMs ?? 60_000;
  }

  /** Forgets every timer and arms the given jobs afresh (start-up, import). */
  reset(jobs: readonly ScheduledJob[]): void {
    for (const id of [...this.armed.keys()]) this.disarm(id);
    for (const job of jobs) this.set(job);
  }

  /** A job's settings changed: a new interval or enabled state takes effect at once. */
  set(job: ScheduledJob): void {
    if (this.stopped) return;
    const current = this.armed.get(job.id);
    if (!job.enabled) return this.disarm(job.id);
    if (current && current.schedule === job.schedule) return;
    this.disarm(job.id);
    const period = job.schedule * this.minuteMs;
    const now = this.options.clock.now();
    const delay = job.lastRunAt == null ? period : Math.min(period, Math.max(0, job.lastRunAt + period - now));
    this.arm(job.id, job.schedule, delay);
  }

  /** Whether a job has a task; for tests and the jobs page. */
  isArmed(jobId: number): boolean {
    return this.armed.has(jobId);
  }

  stop(): void {
    this.stopped = true;
    for (const id of [...this.armed.keys()]) this.disarm(id);
  }

  private arm(id: number, schedule: number, delay: number): void {
    const first = new Date(Date.now() + delay);
    const task = this.options.tasks.every(`jobs.schedule:${id}`, schedule * this.minuteMs, () => this.options.run(id), { first });
    this.armed.set(id, { schedule, task });
  }

  private disarm(id: number): void {
    this.armed.get(id)?.task.cancel();
    this.armed.delete(id);
  }
}
