import { nameOf, type AuditLog } from '../audit.js';
import { currentContext, runAs, withContext, type ChangeContext } from '../http/request-context.js';
import type { AppContext } from '../context.js';
import { conflict, HttpError, notFound, validationFailed } from '../errors.js';
import { fieldErrors } from '../http/validate.js';
import { JOB_KEYS, REDACTED, SECRET_FIELDS, type DryRun, type JobDetail, type JobKey, type JobRun, type JobView, type RunAnswer, type RunStatus } from '../contract/jobs.js';
import type { JobUpdate } from '../contract/inputs/jobs.js';
import type { Instance } from '../contract/registry.js';
import type { InstanceService } from '../registry/service.js';
import { within } from '../tasks.js';
import { isoMillis } from '../time.js';
import { JOB_HANDLERS } from './handlers/index.js';
import type { Change, HandlerAnswer } from './handlers/types.js';
import { jobChanges, jobSubject, previewChanges, runSummary } from './changes.js';
import { requireSecretsRetyped } from './destination.js';
import { createHttpClient } from './http.js';
import { createJobRepo, type JobWithLastRun } from './repo.js';
import { Scheduler } from './scheduler.js';
import {
  DEFAULT_SCHEDULE,
  JOB_CONFIG,
  JOB_DEFINITIONS,
  missingConfigFields,
  parseStoredConfig,
  redactConfig,
  scrubSecrets,
  type JobRow,
} from './schema.js';

export interface JobsOptions {
  /** Length of a schedule minute in ms (60 000); tests shorten it. */
  minuteMs?: number;
  /** Remote call timeout in ms (30 000). */
  httpTimeoutMs?: number;
  /** How long close() waits for runs in flight (5 000 ms). */
  closeTimeoutMs?: number;
}

export type JobService = ReturnType<typeof createJobService>;

interface RunOutcome {
  runId: number;
  status: Exclude<RunStatus, 'running'>;
  result: string;
}

function present(row: JobWithLastRun): JobView {
  const config = parseStoredConfig(row.config);
  const missing = missingConfigFields(row.key, config);
  return {
    id: row.id,
    key: row.key,
    name: row.name,
    description: row.description,
    enabled: row.enabled ? 1 : 0,
    schedule: row.schedule,
    config: redactConfig(config),
    configured: missing.length === 0,
    missing,
    last_run_at: row.last_run_at,
    last_status: row.last_status,
    last_run_id: row.last_run_id,
  };
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)) || 'job failed';

/**
 * Jobs: settings, runs (never two of one job at once), the scheduler and run-on-create.
 * Handlers say what instances should look like; changes are applied here through the
 * instance update path in one transaction, recorded in history as `job:<key>`.
 */
export function createJobService(ctx: AppContext, instances: InstanceService, audit: AuditLog, options: JobsOptions = {}) {
  const { db, clock, logger, bus, transaction } = ctx;
  const repo = createJobRepo(db);
  const shutdown = new AbortController();
  const http = createHttpClient({ timeoutMs: options.httpTimeoutMs ?? 30_000, signal: shutdown.signal });
  const running = new Map<number, Promise<RunOutcome>>();
  let closed = false;
  const stopListening: (() => void)[] = [];

  const scheduler = new Scheduler({
    clock,
    minuteMs: options.minuteMs,
    tasks: ctx.tasks,
    run: (jobId) => {
      const job = repo.findById(jobId);
      if (!job?.enabled) return;
      if (!start(job)) logger.info({ job: job.key }, 'scheduled run skipped: job already running');
    },
  });

  const scheduled = (row: JobWithLastRun) => ({
    id: row.id,
    enabled: row.enabled === 1,
    schedule: row.schedule,
    lastRunAt: row.last_run_at ? Date.parse(row.last_run_at) : null,
  });

  function require(id: number): JobWithLastRun {
    const row = repo.findById(id);
    if (!row) throw notFound('job not found');
    return row;
  }

  /** Applies the changes in one transaction; each is announced once it has committed. Returns how many changed. */
  const applyChanges = transaction((changes: Change[]): number => {
    let applied = 0;
    for (const change of changes) {
      try {
        if (instances.update(change.vmid, change.patch, change.facts).changed.length) applied++;
      } catch (err) {
        // Deleted (or renumbered) while the remote call was in flight: nothing to update.
        if (err instanceof HttpError && err.status === 404) continue;
        throw err;
      }
    }
    return applied;
  });

  /** Ends the run; a run-now that succeeded gets its request's entry in the same transaction (a failed one answers 500: none). */
  const finish = transaction((job: JobRow, runId: number, status: RunOutcome['status'], result: string, asked: ChangeContext | undefined) => {
    const endedAt = isoMillis(clock.now());
    repo.finishRun(runId, endedAt, status, result);
    repo.prune(job.id);
    if (asked && status === 'success') {
      withContext(asked, () => {
        const summary = `${nameOf()} ran job “${job.name}” now: ${result}`;
        audit.write({ action: 'request', subject: jobSubject(job), summary, detail: { name: job.name, run_id: runId } });
      });
    }
    return endedAt;
  });

  async function execute(job: JobRow, runId: number, startedAt: string, asked: ChangeContext | undefined): Promise<RunOutcome> {
    let status: RunOutcome['status'] = 'success';
    let result: string;
    const config = parseStoredConfig(job.config);
    try {
      const list: Instance[] = instances.list({ sort: 'name', descending: false });
      const answer = await JOB_HANDLERS[job.key](config, list, http);
      if (!db.open) throw new Error('the server shut down during the run');
      // The run's changes are the job's, in history and the change log, whoever asked for the run.
      const updated = runAs({ type: 'job', id: job.id, name: job.key }, () => applyChanges(answer.changes));
      result = runSummary(`Updated ${updated} of ${list.length} instances`, answer.notes);
    } catch (err) {
      status = 'error';
      // The one place a run's error text is made: stored in the run, logged and sent by run-now.
      result = scrubSecrets(errorText(err), config);
    }
    if (db.open) {
      const endedAt = finish(job, runId, status, result, asked);
      bus.publish('job.run.finished', { job_id: job.id, job_key: job.key, run_id: runId, status, started_at: startedAt, ended_at: endedAt, result });
    }
    if (status === 'error') logger.warn({ job: job.key, run: runId, error: result }, 'job run failed');
    else logger.info({ job: job.key, run: runId, result }, 'job run finished');
    return { runId, status, result };
  }

  /** Starts a run unless one of the same job is going; the run row exists when this returns. `asked`: a run-now's request. */
  function start(job: JobRow, asked?: ChangeContext): Promise<RunOutcome> | undefined {
    if (running.has(job.id) || closed) return undefined;
    const startedAt = isoMillis(clock.now());
    const runId = repo.startRun(job.id, startedAt);
    bus.publish('job.run.started', { job_id: job.id, job_key: job.key, run_id: runId, status: 'running', started_at: startedAt, ended_at: null, result: '' });
    const promise = execute(job, runId, startedAt, asked).finally(() => running.delete(job.id));
    running.set(job.id, promise);
    return promise;
  }

  // "every job whose config.run_on_create is true is run, one after another, without delaying
  // the 201": queued behind a setImmediate, so the response is written first. Creates that
  // arrive while a batch waits share it, and the jobs are looked up once per batch, not per create.
  let onCreateChain: Promise<void> = Promise.resolve();
  let batchPending = false;
  const onInstanceCreated = () => {
    if (batchPending || closed) return;
    batchPending = true;
    onCreateChain = onCreateChain
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(async () => {
        batchPending = false;
        if (closed || !repo.anyRunOnCreate()) return;
        for (const job of repo.list()) {
          if (closed) return;
          if (parseStoredConfig(job.config).run_on_create !== true) continue;
          const run = start(job);
          if (run) await run;
          else logger.info({ job: job.key }, 'run on create skipped: job already running');
        }
      })
      .catch((err: unknown) => logger.error({ error: errorText(err) }, 'run on create failed'));
  };

  /**
   * Omitted fields unchanged; config merged, `**REDACTED**` keeps a stored secret (unless api_url
   * changes: destination.ts), null removes a field.
   * The change and its request's audit entry (fields by name, secrets without values) commit together.
   */
  const updateTx = transaction((id: number, body: JobUpdate) => {
    const row = require(id);
    let config = parseStoredConfig(row.config);
    if (body.config) {
      const merged: Record<string, unknown> = { ...config };
      for (const [field, value] of Object.entries(body.config)) {
        if ((SECRET_FIELDS as readonly string[]).includes(field) && value === REDACTED) continue;
        if (value === null) delete merged[field];
        else merged[field] = value;
      }
      const parsed = JOB_CONFIG[row.key].safeParse(merged);
      if (!parsed.success) {
        throw validationFailed(fieldErrors(parsed.error).map((e) => ({ ...e, field: e.field === 'body' ? 'config' : `config.${e.field}` })));
      }
      requireSecretsRetyped(row.key, config, body.config, parsed.data);
      config = parsed.data;
    }
    const enabled = body.enabled === undefined ? row.enabled : body.enabled ? 1 : 0;
    const schedule = body.schedule ?? row.schedule;
    repo.update(id, enabled, schedule, JSON.stringify(config));
    const updated = require(id);
    const changes = jobChanges(row, updated);
    const changed = changes.map((c) => c.field);
    const summary = changed.length
      ? `${nameOf()} changed the settings of job “${row.name}”: ${changed.join(', ')}`
      : `${nameOf()} saved the settings of job “${row.name}” without changes`;
    audit.write({ action: 'request', subject: jobSubject(row), summary, changes, detail: { name: row.name, fields: changed } });
    return { updated, changed };
  });

  /** The three built-in jobs exist on a file database: created disabled with empty config when absent. */
  const seedBuiltIns = () => {
    if (ctx.config.dbPath === ':memory:') return;
    for (const key of JOB_KEYS) repo.seed(key, JOB_DEFINITIONS[key].name, JOB_DEFINITIONS[key].description, DEFAULT_SCHEDULE);
  };

  // An import replaces the jobs with the document's; a built-in job the document lacks ("jobs": [])
  // is seeded again at once. This runs synchronously after the import's commit, so no request sees
  // the jobs missing; a crash in between is repaired by the seeding at start-up.
  const onBackupImported = () => {
    seedBuiltIns();
    repo.pruneAll();
    scheduler.reset(repo.list().map(scheduled));
  };

  return {
    /** Seeds the jobs (file databases only), closes runs a crash left open, prunes, arms the scheduler. */
    start(): void {
      seedBuiltIns();
      const interrupted = repo.closeInterrupted(isoMillis(clock.now()), 'interrupted by restart');
      if (interrupted) logger.warn({ runs: interrupted }, 'closed job runs interrupted by a restart');
      repo.pruneAll();
      scheduler.reset(repo.list().map(scheduled));
      stopListening.push(bus.on('instance.created', onInstanceCreated), bus.on('backup.imported', onBackupImported));
    },

    list: (): JobView[] => repo.list().map(present),
    /** Per job key, when a run last ended in success (the Prometheus gauge). */
    lastSuccesses: (): { key: JobKey; at: string | null }[] => repo.lastSuccesses(),
    /** A run's result text, as stored (secrets are scrubbed before a result is written). */
    runResult: (runId: number): string | undefined => repo.runResult(runId),

    get(id: number): JobDetail {
      const row = require(id);
      return { ...present(row), runs: repo.runs(id) };
    },

    /** Updates a job's settings; `changed` names the fields whose value differs from what was stored (`enabled`, `config.api_url`). */
    update(id: number, body: JobUpdate): { job: JobView; changed: string[] } {
      const { updated, changed } = updateTx(id, body);
      scheduler.set(scheduled(updated));
      return { job: present(updated), changed };
    },

    /** Run-now: blocks until the run ends; 409 when the job is already running; 500 with the handler's error. */
    async runNow(id: number): Promise<RunAnswer> {
      const run = start(require(id), currentContext());
      if (!run) throw conflict('job already running');
      const outcome = await run;
      if (outcome.status === 'error') throw new HttpError(500, { error: outcome.result });
      return { summary: outcome.result };
    },

    /**
     * What a run would change now, field by field, written nowhere: no run row, no history, no event.
     * The handler asks its remote service exactly as a run does; its error is a 500 as run-now's is.
     * Only the request's audit entry records that it was asked.
     */
    async dryRun(id: number): Promise<DryRun> {
      const job = require(id);
      const config = parseStoredConfig(job.config);
      const list: Instance[] = instances.list({ sort: 'name', descending: false });
      let answer: HandlerAnswer;
      try {
        answer = await JOB_HANDLERS[job.key](config, list, http);
      } catch (err) {
        throw new HttpError(500, { error: scrubSecrets(errorText(err), config) });
      }
      const fields = previewChanges(list, answer.changes);
      const touched = new Set(fields.map((change) => change.vmid)).size;
      const summary = runSummary(`Would update ${touched} of ${list.length} instances`, answer.notes);
      const words = `${nameOf()} previewed a run of job “${job.name}” (dry run, nothing changed): ${summary}`;
      audit.write({ action: 'request', subject: jobSubject(job), summary: words, detail: { name: job.name, dry_run: true } });
      return { summary, changes: fields };
    },
    isRunning: (id: number) => running.has(id),

    /** Stops the scheduler, cancels remote calls and waits (bounded) for runs in flight. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      scheduler.stop();
      for (const stop of stopListening.splice(0)) stop();
      shutdown.abort();
      await within(Promise.allSettled([...running.values(), onCreateChain]), options.closeTimeoutMs ?? 5_000);
    },
  };
}
