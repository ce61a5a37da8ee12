import type { TaskStatus } from './contract/tasks.js';
import type { Logger } from './logger.js';
import { isoMillis } from './time.js';

/**
 * Resolves in the next turn of the event loop, after the I/O waiting now (a health check, the turn's
 * group commit): long work awaits it between slices so that no request waits for all of it.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A task's work. `signal` aborts when the runner stops: work that can end early listens to it. */
export type TaskFn = (signal: AbortSignal) => unknown;

export interface Task {
  readonly name: string;
  /** Moves the next run to `when` (a repeating task goes on every interval from there); asked during a run, after it. */
  reschedule(when: Date): void;
  /** No run from now on. A run going on is left to end (stop() still waits for it). */
  cancel(): void;
}

export interface Tasks {
  /**
   * Runs `fn` every `intervalMs` (the first time one interval after the runner starts, or `first`).
   * A run still going when the next falls due makes that next one skipped, never run beside it.
   */
  every(name: string, intervalMs: number, fn: TaskFn, options?: { first?: Date }): Task;
  /** Runs `fn` once at `when`; `reschedule` during the run keeps it for another. */
  at(name: string, when: Date, fn: TaskFn): Task;
  /** Arms every task registered so far; tasks registered later are armed at once. */
  start(): void;
  /** No run starts from now on; resolves once the runs going on have ended (at most `stopTimeoutMs`, then names the stragglers). */
  stop(): Promise<void>;
  status(): TaskStatus[];
}

export interface TasksOptions {
  /** How long stop() waits for runs going on (10 s): the database closes after it, whatever is left. */
  stopTimeoutMs?: number;
  /** What a run waits for before it starts, when there is something (the database's writes held for an import). */
  before?: () => Promise<void> | undefined;
}

/** setTimeout holds at most ~24.8 days; a longer wait is taken in pieces. */
const MAX_WAIT_MS = 2_000_000_000;

interface Entry {
  name: string;
  intervalMs: number | null;
  fn: TaskFn;
  /** When the next run is due (ms since the epoch); null while running or when none is due. */
  due: number | null;
  /** A repeating task registered before the start without a first time: its interval counts from the start. */
  fromStart: boolean;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  cancelled: boolean;
  runs: number;
  failures: number;
  skipped: number;
  lastStartedAt: number | null;
  lastEndedAt: number | null;
  lastFailedAt: number | null;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The one owner of the server's background work (PocketBase's `app.Cron()` and `OnTerminate`): a
 * loop hands its function here and never holds a timer of its own. A task never runs beside itself,
 * a failure is logged under the task's name and the next run still comes, and stop() is one awaited
 * end of all of it, before the database closes. Timers are unref'd: background work alone never
 * keeps the process up.
 */
export function createTasks(logger: Logger, options: TasksOptions = {}): Tasks {
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const entries = new Map<string, Entry>();
  /** Every run going on, of live and cancelled tasks alike: stop() waits for them all. */
  const inFlight = new Map<Promise<void>, string>();
  const shutdown = new AbortController();
  let started = false;
  let stopped = false;

  function arm(entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    if (!started || stopped || entry.cancelled || entry.running || entry.due === null) return;
    const due = entry.due;
    const wait = Math.min(Math.max(0, due - Date.now()), MAX_WAIT_MS);
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (Date.now() < due) arm(entry);
      else run(entry);
    }, wait);
    entry.timer.unref();
  }

  function run(entry: Entry): void {
    const due = entry.due!;
    entry.due = null;
    entry.runs++;
    entry.lastStartedAt = Date.now();
    const running = (async () => {
      try {
        const held = options.before?.();
        if (held) await held;
        await entry.fn(shutdown.signal);
      } catch (err) {
        entry.failures++;
        entry.lastFailedAt = Date.now();
        logger.error({ task: entry.name, err: { message: messageOf(err) } }, `background task ${entry.name} failed`);
      }
    })().finally(() => {
      inFlight.delete(running);
      entry.running = undefined;
      const now = (entry.lastEndedAt = Date.now());
      // Rescheduled during the run: that time stands. Otherwise a repeating task's next tick, past
      // the ones that fell due while this run went on (those are skipped, not run late).
      if (entry.due === null && entry.intervalMs !== null) {
        const missed = Math.max(0, Math.floor((now - due) / entry.intervalMs));
        entry.skipped += missed;
        entry.due = due + (missed + 1) * entry.intervalMs;
      }
      if (entry.due === null) forget(entry);
      else arm(entry);
    });
    entry.running = running;
    inFlight.set(running, entry.name);
  }

  function forget(entry: Entry): void {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entries.get(entry.name) === entry) entries.delete(entry.name);
  }

  function register(name: string, intervalMs: number | null, due: number, fn: TaskFn, fromStart = false): Task {
    const existing = entries.get(name);
    // Two live tasks of one name would be one name for two things in the log and the status.
    if (existing) throw new Error(`background task ${name} is already registered`);
    if (intervalMs !== null && !(intervalMs > 0)) throw new Error(`background task ${name}: interval must be positive`);
    if (!Number.isFinite(due)) throw new Error(`background task ${name}: no valid time to run at`);
    const entry: Entry = { name, intervalMs, fn, due, fromStart: fromStart && !started, cancelled: false, runs: 0, failures: 0, skipped: 0, lastStartedAt: null, lastEndedAt: null, lastFailedAt: null };
    if (!stopped) entries.set(name, entry);
    arm(entry);
    return {
      name,
      reschedule(when: Date) {
        if (entry.cancelled) return;
        entry.due = when.getTime();
        arm(entry);
      },
      cancel() {
        entry.cancelled = true;
        entry.due = null;
        forget(entry);
      },
    };
  }

  const iso = (ms: number | null) => (ms === null ? null : isoMillis(ms));

  return {
    every: (name, intervalMs, fn, opts = {}) => register(name, intervalMs, opts.first?.getTime() ?? Date.now() + intervalMs, fn, !opts.first),
    at: (name, when, fn) => register(name, null, when.getTime(), fn),

    start() {
      if (started) return;
      started = true;
      for (const entry of entries.values()) {
        if (entry.fromStart && entry.due !== null) entry.due = Date.now() + entry.intervalMs!;
        arm(entry);
      }
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      for (const entry of entries.values()) clearTimeout(entry.timer);
      shutdown.abort();
      if (inFlight.size === 0) return;
      const ended = await within(Promise.allSettled(inFlight.keys()), stopTimeoutMs);
      if (!ended) logger.warn({ tasks: [...new Set(inFlight.values())] }, `background tasks still running after ${stopTimeoutMs / 1000} s; stopping without them`);
    },

    status: () =>
      [...entries.values()].map((e) => ({
        name: e.name,
        interval_ms: e.intervalMs,
        running: e.running !== undefined,
        runs: e.runs,
        failures: e.failures,
        skipped: e.skipped,
        last_started_at: iso(e.lastStartedAt),
        last_ended_at: iso(e.lastEndedAt),
        last_failed_at: iso(e.lastFailedAt),
        next_run_at: stopped ? null : iso(e.due),
      })),
  };
}

/**
 * Waits for `work`, but at most `ms`: true when it settled in time. The bound of a wait at shutdown
 * (runs in flight, requests still open), so that one stuck piece of work cannot hold the process.
 */
export async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
