import type { ZodError } from 'zod';
import { nameOf, type AuditLog } from '../audit.js';
import type { BusEvent, BusEvents } from '../bus.js';
import type { AppContext } from '../context.js';
import { badRequest, HttpError, validationFailed } from '../errors.js';
import { decodeJsonBody } from '../http/json-text.js';
import { currentContext } from '../http/request-context.js';
import { fieldErrors, isPlainObject } from '../http/validate.js';
import type { BackupDocument, BackupHistoryRow, ImportAnswer } from '../contract/backup.js';
import type { BackupCollection } from '../contract/collections.js';
import { BackupCollectionRow } from '../contract/inputs/collections.js';
import type { JobRun } from '../contract/jobs.js';
import type { Instance } from '../contract/registry.js';
import type { BackupScript } from '../contract/scripts.js';
import { isoMillis } from '../time.js';
import { helperOf, startImportHelper, type ImportOptions } from './import-process.js';
import { BACKUP_VERSION, BackupJob, BackupRun, parseBackupHistoryEntry, parseBackupInstance, type BackupHistoryEntry, type BackupInstance } from './schema.js';

declare module '../bus.js' {
  interface InternalEvents {
    /** Every instance was replaced at once (and jobs, when the document had them): no list of changes says so. */
    'backup.imported': Record<string, never>;
  }
}

/**
 * What a backup carries of other features' tables, each read and written by the feature that owns
 * it (server/registry/backup.ts, server/jobs/backup.ts), built on a connection by
 * server/backup-sources.ts. The imports run inside this service's one transaction, beside its audit entry.
 */
export interface BackupSources {
  registry: {
    exportInstances(): Instance[];
    exportHistory(): BackupHistoryRow[];
    importRows(instances: readonly BackupInstance[], history: readonly BackupHistoryEntry[] | undefined, now: number): void;
  };
  jobs: {
    exportJobs(): BackupJob[];
    exportRuns(): JobRun[];
    jobIds(): number[];
    importRows(jobs: readonly BackupJob[] | undefined, runs: readonly BackupRun[] | undefined): void;
  };
  /** Scripts with their kept versions (server/scripts/backup.ts): `parse` throws the 400 naming the first bad one. */
  scripts: {
    exportScripts(): BackupScript[];
    parse(raw: unknown): ScriptImport[];
    importRows(scripts: readonly ScriptImport[]): void;
  };
  /** The collections (server/collections/backup.ts). */
  collections: {
    exportCollections(): BackupCollection[];
    importRows(rows: readonly BackupCollection[] | undefined): void;
  };
}

/** An import whose body passed its checks, not written yet. */
export interface PreparedImport {
  write(): Promise<ImportAnswer>;
  cancel(): void;
}

/** A script of an import, as server/scripts checked it (its shape is that feature's). */
export type ScriptImport = Omit<BackupScript, 'size' | 'sha256'>;

export type BackupService = ReturnType<typeof createBackupService>;

/** A checked import, ready to be written. */
export interface ImportPlan {
  instances: BackupInstance[];
  history: BackupHistoryEntry[] | undefined;
  jobs: BackupJob[] | undefined;
  runs: BackupRun[] | undefined;
  /** Absent from the document: the scripts stay as they are. */
  scripts?: ScriptImport[] | undefined;
  collections: BackupCollection[] | undefined;
}

type RowParser<T> = (row: unknown) => { success: true; data: T } | { success: false; error: ZodError };
/** How a person finds a row again: `instances[3] (vmid 104, "nextcloud")`. */
type RowLabel = (index: number, row: unknown) => string;

const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value) : String(value));
const isPrintable = (value: unknown) => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function labelOf(section: string, keys: string[]): RowLabel {
  return (index, row) => {
    const r = (typeof row === 'object' && row !== null ? row : {}) as Record<string, unknown>;
    const parts = keys.filter((k) => isPrintable(r[k])).map((k) => (k === 'name' ? shown(r[k]) : `${k} ${shown(r[k])}`));
    return `${section}[${index}]${parts.length ? ` (${parts.join(', ')})` : ''}`;
  };
}

const instanceLabel = labelOf('instances', ['vmid', 'name']);
const historyLabel = labelOf('instance_history', ['vmid', 'field']);
const jobLabel = labelOf('jobs', ['id', 'key']);
const runLabel = labelOf('job_runs', ['id', 'job_id']);
const collectionLabel = labelOf('collections', ['id', 'name']);

/** One import error: a field path a program can use, and a message a person can act on. */
function rowError(label: RowLabel, section: string, index: number, row: unknown, field: string | undefined, message: string) {
  return {
    field: field ? `${section}[${index}].${field}` : `${section}[${index}]`,
    message: `${label(index, row)}: ${field ? `${field} ` : ''}${message}`,
  };
}

/**
 * Validates each row; the first bad row rejects the import, every error naming the row as a person
 * would find it (`instances[3] (vmid 104, "nextcloud"): tailscale_ip must be ...`). Nothing is
 * written before every row passed.
 */
function validateRows<T>(rows: unknown[], parse: RowParser<T>, section: string, label: RowLabel): T[] {
  const out = new Array<T>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const result = parse(rows[i]);
    if (!result.success) {
      if (!isPlainObject(rows[i])) throw validationFailed([rowError(label, section, i, rows[i], undefined, 'must be a JSON object')]);
      throw validationFailed(fieldErrors(result.error).map((e) => rowError(label, section, i, rows[i], e.field === 'body' ? undefined : e.field, e.message)));
    }
    out[i] = result.data;
  }
  return out;
}

function rejectDuplicates<T>(raw: unknown[], rows: T[], section: string, label: RowLabel, field: string, value: (row: T) => unknown): void {
  const firstAt = new Map<unknown, number>();
  for (let i = 0; i < rows.length; i++) {
    const v = value(rows[i]!);
    const first = firstAt.get(v);
    if (first !== undefined) throw validationFailed([rowError(label, section, i, raw[i], field, `duplicates ${label(first, raw[first])}`)]);
    firstAt.set(v, i);
  }
}

/**
 * The JSON backup: export everything; import replaces instances (and jobs and runs when present) in
 * one transaction.
 *
 * A 64 MiB import is 200,000 instances and as many history rows: a fifth of a second of JSON.parse
 * and seconds of checking and writing, more than one turn of the event loop may take. Into a database
 * file it goes to the import helper (server/import-helper.ts, a process of its own) which parses,
 * checks and writes it on its own connection, in one transaction: requests go on meanwhile, and
 * their reads see the registry as it was until the whole import commits; this connection is held
 * from writing (server/db/tx.ts `exclusive`), so a request that may write waits for the import. An
 * in-memory database (the tests'), which no other process can open, or a server without the built
 * helper, writes it here, in one synchronous transaction, as the helper does.
 */
export function createBackupService(
  { db, clock, bus, transaction, commits }: Pick<AppContext, 'db' | 'clock' | 'bus' | 'transaction' | 'commits'>,
  audit: AuditLog,
  { registry, jobs: jobRows, scripts: scriptRows, collections: collectionRows }: BackupSources,
  imports: ImportOptions = {},
) {
  const helper = db.memory ? undefined : helperOf(imports);

  const replaceAll = transaction(({ instances, history, jobs, runs, scripts, collections }: ImportPlan, now: number) => {
    registry.importRows(instances, history, now);
    jobRows.importRows(jobs, runs);
    if (scripts) scriptRows.importRows(scripts);
    collectionRows.importRows(collections);
    const replaced = jobs ? 'the registry and the jobs' : 'the registry';
    const summary = `${nameOf()} imported a backup of ${instances.length} instances, replacing ${replaced}`;
    // One entry for the whole import: its `imported` history rows are the instances' own.
    const detail = {
      imported: instances.length,
      ...(jobs ? { jobs: jobs.length } : {}),
      ...(scripts ? { scripts: scripts.length } : {}),
      ...(collections ? { collections: collections.length } : {}),
    };
    audit.write({ action: 'request', subject: { type: 'backup', id: 'import', name: null }, summary, detail });
    bus.publish('backup.imported', {});
  });

  /** Checks the whole document; throws the 400 naming the first bad row. Writes nothing. */
  function validate(body: unknown): ImportPlan {
    if (!isPlainObject(body) || !Array.isArray(body.instances)) {
      throw validationFailed([{ field: 'instances', message: 'must be an array of instances' }]);
    }
    const version = body.version ?? 1;
    if (!Number.isInteger(version) || (version as number) < 1 || (version as number) > BACKUP_VERSION) {
      throw badRequest('unsupported backup version');
    }
    for (const section of ['instance_history', 'jobs', 'job_runs', 'collections'] as const) {
      if (body[section] !== undefined && body[section] !== null && !Array.isArray(body[section])) {
        throw validationFailed([{ field: section, message: 'must be an array' }]);
      }
    }
    const instances = validateRows(body.instances, parseBackupInstance, 'instances', instanceLabel);
    rejectDuplicates(body.instances, instances, 'instances', instanceLabel, 'vmid', (i) => i.vmid);
    let history: BackupHistoryEntry[] | undefined;
    if (Array.isArray(body.instance_history)) {
      const raw = body.instance_history;
      history = validateRows(raw, parseBackupHistoryEntry, 'instance_history', historyLabel);
      const vmids = new Set(instances.map((i) => i.vmid));
      const orphan = history.findIndex((h) => !vmids.has(h.vmid));
      if (orphan >= 0) {
        throw validationFailed([rowError(historyLabel, 'instance_history', orphan, raw[orphan], 'vmid', 'names no instance in this backup')]);
      }
    }
    const jobs = Array.isArray(body.jobs) ? validateRows(body.jobs, (row) => BackupJob.safeParse(row), 'jobs', jobLabel) : undefined;
    if (jobs) {
      rejectDuplicates(body.jobs as unknown[], jobs, 'jobs', jobLabel, 'id', (j) => j.id);
      rejectDuplicates(body.jobs as unknown[], jobs, 'jobs', jobLabel, 'key', (j) => j.key);
    }
    const runs = Array.isArray(body.job_runs) ? validateRows(body.job_runs, (row) => BackupRun.safeParse(row), 'job_runs', runLabel) : undefined;
    if (runs) {
      rejectDuplicates(body.job_runs as unknown[], runs, 'job_runs', runLabel, 'id', (r) => r.id);
      const known = new Set(jobs ? jobs.map((j) => j.id) : jobRows.jobIds());
      const orphan = runs.findIndex((r) => !known.has(r.job_id));
      if (orphan >= 0) throw validationFailed([rowError(runLabel, 'job_runs', orphan, (body.job_runs as unknown[])[orphan], 'job_id', 'names no job')]);
    }
    const scripts = body.scripts === undefined || body.scripts === null ? undefined : scriptRows.parse(body.scripts);
    const collections = Array.isArray(body.collections)
      ? validateRows(body.collections, (row) => BackupCollectionRow.safeParse(row), 'collections', collectionLabel)
      : undefined;
    if (collections) {
      rejectDuplicates(body.collections as unknown[], collections, 'collections', collectionLabel, 'id', (c) => c.id);
      rejectDuplicates(body.collections as unknown[], collections, 'collections', collectionLabel, 'name', (c) => c.name.toLowerCase());
    }
    return { instances, history, jobs, runs, scripts, collections };
  }

  /** The import its helper is writing: the server waits for it before the database closes. */
  let writing: Promise<unknown> = Promise.resolve();

  /**
   * A body as the import route reads it (its bytes), checked: rejects with the 400 naming what is
   * wrong, writing nothing; else `write` writes it (after the pre-import snapshot) and `cancel`
   * drops it.
   */
  async function prepare(body: unknown): Promise<PreparedImport> {
    if (!helper || !Buffer.isBuffer(body)) {
      const plan = validate(Buffer.isBuffer(body) ? decodeJsonBody(body) : body);
      return { write: async () => apply(plan), cancel: () => undefined };
    }
    const run = startImportHelper(db.name, body, helper.file, helper.command);
    try {
      await run.checked;
    } catch (err) {
      run.cancel();
      throw err;
    }
    return {
      write() {
        const { actor, ip, request } = currentContext();
        const context = { actor, ip, request: request && { id: request.id, method: request.method, path: request.path, status: request.status() } };
        const work = commits.exclusive(async () => {
          const { imported, announced } = await run.write({ now: clock.now(), context }).catch((err: Error) => {
            // Its one transaction did not commit: the database is as it was.
            throw new HttpError(500, { error: `nothing was imported: ${err.message}` });
          });
          for (const [type, payload] of announced) bus.publish(type as BusEvent, payload as BusEvents[BusEvent]);
          return { imported };
        });
        writing = work.catch(() => {});
        return work;
      },
      cancel: run.cancel,
    };
  }

  /** Writes a checked import and its change log entry in one transaction on this connection. Returns the number of instances imported. */
  function apply(plan: ImportPlan, now = clock.now()): ImportAnswer {
    replaceAll(plan, now);
    return { imported: plan.instances.length };
  }

  return {
    exportDocument(): BackupDocument {
      return {
        version: BACKUP_VERSION,
        exported_at: isoMillis(clock.now()),
        instances: registry.exportInstances(),
        instance_history: registry.exportHistory(),
        jobs: jobRows.exportJobs(),
        job_runs: jobRows.exportRuns(),
        scripts: scriptRows.exportScripts(),
        collections: collectionRows.exportCollections(),
      };
    },

    validate,
    apply,
    prepare,

    /** Validates every row, then replaces in one transaction. Returns the number of instances imported. */
    importDocument: (body: unknown): ImportAnswer => apply(validate(body)),

    /** Waits for an import its helper is writing, before the database closes. */
    close: (): Promise<unknown> => writing,
  };
}
