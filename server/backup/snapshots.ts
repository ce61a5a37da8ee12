import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AppContext } from '../context.js';
import { conflict, notFound } from '../errors.js';

/**
 * Database snapshots: SQLite online backups of the whole database (registry, accounts, sessions,
 * audit, usage) into `snapshots/` beside the database file. A snapshot is copied and checked
 * (`PRAGMA integrity_check`) in a worker thread, so requests are never held up by it; it is
 * written to a dot-named `.partial` file and only renamed to its final name once checked and on
 * disk, so a file with a snapshot's name is always a whole, checked database (a crash leaves at
 * most a `.partial`, removed at the next start).
 */

export const SNAPSHOT_KINDS = ['scheduled', 'manual', 'pre-import'] as const;
export type SnapshotKind = (typeof SNAPSHOT_KINDS)[number];

export interface SnapshotInfo {
  name: string;
  kind: SnapshotKind;
  taken_at: string;
  size: number;
}

/** `homefleet-2026-11-23T10-15-00Z-scheduled.db` (a `-2`, `-3`, ... when a second one falls in the same second). */
export const SNAPSHOT_NAME = /^homefleet-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z-(scheduled|manual|pre-import)(?:-(\d{1,4}))?\.db$/;
const PARTIAL = /^\.homefleet-.*\.partial(-journal|-wal|-shm)?$/;
export const PRE_IMPORT_KEEP = 3;
/** Pages copied per step: 256 pages of 4 KiB, well under a millisecond or two of copying. */
const PAGES_PER_STEP = 256;

export function snapshotDirectory(dbPath: string): string {
  return path.join(path.dirname(path.resolve(dbPath)), 'snapshots');
}

function parseName(name: string): { kind: SnapshotKind; takenAt: string; seq: number } | undefined {
  const m = SNAPSHOT_NAME.exec(name);
  if (!m) return undefined;
  return { kind: m[5] as SnapshotKind, takenAt: `${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`, seq: m[6] ? Number(m[6]) : 1 };
}

/**
 * Copying and checking run in one worker thread with its own connection, at the lowest CPU priority
 * (Linux): the server's event loop never waits for either. The copy is one backup step inside one
 * read transaction, so it is a consistent picture of one moment; in WAL mode a reader does not
 * block the server's writes. The worker is started at the first snapshot and kept: a new thread
 * per snapshot left memory behind each time (peak RSS over back-to-back imports 244, 258, 277 MB).
 */
const SNAPSHOT_WORKER = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
try {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  if (tid > 0) require('node:os').setPriority(tid, 19);
} catch {}
// better-sqlite3 12 objects are never left to the collector (see server/db/database.ts).
const retained = [];
function open(file, options) {
  const db = new Database(file, options);
  retained.push(db);
  return db;
}
function all(db, sql) {
  const statement = db.prepare(sql);
  retained.push(statement);
  return statement.pluck().all();
}
parentPort.on('message', async ({ id, op, source, dest }) => {
  let db;
  try {
    if (op === 'copy') {
      db = open(source, { fileMustExist: true, timeout: 5000 });
      await db.backup(dest, { progress: () => 0x7fffffff });
      db.close();
      parentPort.postMessage({ id, stage: 'copied' });
    }
    db = open(dest, { fileMustExist: true, timeout: 0 });
    const rows = all(db, 'PRAGMA integrity_check');
    // A self-contained file: no -wal needed beside it to open it elsewhere.
    all(db, 'PRAGMA journal_mode = DELETE');
    db.close();
    const fd = fs.openSync(dest, 'r');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    const ok = rows.length === 1 && rows[0] === 'ok';
    parentPort.postMessage({ id, stage: 'checked', ok, detail: ok ? 'ok' : rows.slice(0, 3).join('; ') });
  } catch (err) {
    try { if (db && db.open) db.close(); } catch {}
    parentPort.postMessage({ id, stage: 'failed', detail: String(err && err.message) });
  }
});
`;

interface Copying {
  /** The copy is complete: it holds the database as it was when it started. */
  copied: Promise<void>;
  /** The copy passed integrity_check and is on disk; rejects with the reason otherwise. */
  checked: Promise<void>;
}

/** The worker, and the main-thread ways used when it cannot start (an unusual runtime). */
function createCopier(db: AppContext['db']) {
  let worker: Worker | undefined;
  let unavailable = false;
  let serial = 0;
  const jobs = new Map<number, { copied: () => void; checked: () => void; fail: (err: Error) => void }>();

  function failAll(err: Error) {
    for (const job of jobs.values()) job.fail(err);
    jobs.clear();
    worker = undefined;
  }

  function start(): Worker | undefined {
    if (worker || unavailable) return worker;
    try {
      const module = createRequire(import.meta.url).resolve('better-sqlite3');
      // A few megabytes of JavaScript at most: the work is SQLite's.
      const w = new Worker(SNAPSHOT_WORKER, { eval: true, workerData: { module }, resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 } });
      w.unref();
      w.on('message', (m: { id: number; stage: 'copied' | 'checked' | 'failed'; ok?: boolean; detail?: string }) => {
        const job = jobs.get(m.id);
        if (!job) return;
        if (m.stage === 'copied') return job.copied();
        jobs.delete(m.id);
        if (m.stage === 'checked' && m.ok) job.checked();
        else job.fail(new Error(m.stage === 'checked' ? `the snapshot failed its integrity check (${m.detail})` : String(m.detail)));
      });
      w.on('error', failAll);
      w.on('exit', () => failAll(new Error('the snapshot worker stopped')));
      worker = w;
    } catch {
      unavailable = true;
    }
    return worker;
  }

  function send(w: Worker, op: 'copy' | 'check', source: string, dest: string): Copying {
    const id = ++serial;
    let copied!: () => void;
    let checked!: () => void;
    let failCopy!: (err: Error) => void;
    let failCheck!: (err: Error) => void;
    const copiedP = new Promise<void>((resolve, reject) => {
      copied = resolve;
      failCopy = reject;
    });
    const checkedP = new Promise<void>((resolve, reject) => {
      checked = resolve;
      failCheck = reject;
    });
    copiedP.catch(() => undefined);
    jobs.set(id, { copied, checked, fail: (err) => (failCopy(err), failCheck(err)) });
    w.postMessage({ id, op, source, dest });
    if (op === 'check') copied();
    return { copied: copiedP, checked: checkedP };
  }

  /** Copied on the server's connection, a few hundred pages per turn of the event loop. */
  function copyHere(dest: string): Promise<void> {
    return db.backup(dest, { progress: () => PAGES_PER_STEP }).then(() => undefined);
  }

  function checkHere(dest: string): void {
    const Database = db.constructor as new (file: string) => AppContext['db'];
    const copy = new Database(dest);
    try {
      const rows = copy.prepare('PRAGMA integrity_check').pluck().all();
      copy.exec('PRAGMA journal_mode = DELETE');
      if (rows.length !== 1 || rows[0] !== 'ok') throw new Error(`the snapshot failed its integrity check (${String(rows[0])})`);
    } finally {
      copy.close();
    }
  }

  return {
    /**
     * `urgent`: someone (an import) waits for the copy. It is then taken on the server's connection
     * in steps, at normal priority (the import is about to hold the event loop anyway); only the check
     * goes to the worker.
     */
    copy(source: string, dest: string, urgent: boolean): Copying {
      const w = start();
      if (!urgent && w) return send(w, 'copy', source, dest);
      const copied = copyHere(dest);
      const checked = copied.then(() => (w ? send(w, 'check', source, dest).checked : checkHere(dest)));
      return { copied, checked };
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) {
        w.removeAllListeners('exit');
        failAll(new Error('the server is stopping'));
        await w.terminate();
      }
    },
  };
}

export type SnapshotService = ReturnType<typeof createSnapshotService>;

export interface SnapshotOptions {
  /** First scheduled snapshot when none exists yet (default one minute after start). */
  firstDelayMs?: number;
}

export function createSnapshotService({ db, config, logger }: Pick<AppContext, 'db' | 'config' | 'logger'>, options: SnapshotOptions = {}) {
  const enabled = config.dbPath !== ':memory:';
  const directory = enabled ? snapshotDirectory(config.dbPath) : null;
  const intervalMs = config.snapshotIntervalHours * 3_600_000;
  const keep: Record<SnapshotKind, number> = { scheduled: config.snapshotKeep, manual: config.snapshotKeep, 'pre-import': PRE_IMPORT_KEEP };
  const copier = createCopier(db);
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** Snapshots run one at a time, in the order asked for. */
  let queue: Promise<unknown> = Promise.resolve();

  function list(): SnapshotInfo[] {
    if (!directory || !fs.existsSync(directory)) return [];
    const out: Array<SnapshotInfo & { seq: number }> = [];
    for (const name of fs.readdirSync(directory)) {
      const parsed = parseName(name);
      if (!parsed) continue;
      try {
        const stat = fs.statSync(path.join(directory, name));
        if (stat.isFile()) out.push({ name, kind: parsed.kind, taken_at: parsed.takenAt, size: stat.size, seq: parsed.seq });
      } catch {
        // Removed while listing: not there.
      }
    }
    // Newest first: by time, then by the number that tells apart two taken in one second.
    out.sort((a, b) => (a.taken_at === b.taken_at ? b.seq - a.seq : a.taken_at < b.taken_at ? 1 : -1));
    return out.map(({ seq: _seq, ...info }) => info);
  }

  /** A name after every existing one of the same second and kind, so order by name is order taken. */
  function freeName(kind: SnapshotKind, now: Date): string {
    const stamp = now.toISOString().slice(0, 19).replace(/:/g, '-');
    const base = `homefleet-${stamp}Z-${kind}`;
    let seq = 0;
    for (const name of fs.readdirSync(directory!)) {
      const clean = name.replace(/^\./, '').replace(/\.partial.*$/, '');
      if (clean === `${base}.db`) seq = Math.max(seq, 1);
      const m = clean.startsWith(`${base}-`) ? /^-(\d+)\.db$/.exec(clean.slice(base.length)) : null;
      if (m) seq = Math.max(seq, Number(m[1]));
    }
    return seq === 0 ? `${base}.db` : `${base}-${seq + 1}.db`;
  }

  function prune(kind: SnapshotKind): void {
    const mine = list().filter((s) => s.kind === kind);
    for (const old of mine.slice(keep[kind])) fs.rmSync(path.join(directory!, old.name), { force: true });
  }

  function removePartial(file: string): void {
    for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  }

  /**
   * Copies the live database into a `.partial` file. Resolves when the copy is complete (it holds
   * the database as it was); `finished` resolves when it has been checked and renamed (or removed).
   */
  async function copy(kind: SnapshotKind): Promise<{ finished: Promise<SnapshotInfo> }> {
    if (!directory) throw conflict('snapshots are off: the database is in memory');
    if (closed) throw conflict('the server is stopping');
    fs.mkdirSync(directory, { recursive: true });
    const name = freeName(kind, new Date());
    const partial = path.join(directory, `.${name}.partial`);
    removePartial(partial);
    const copying = copier.copy(path.resolve(config.dbPath), partial, kind === 'pre-import');
    copying.checked.catch(() => undefined);
    try {
      await copying.copied;
    } catch (err) {
      removePartial(partial);
      throw err;
    }
    const finished = (async () => {
      try {
        await copying.checked;
        fs.renameSync(partial, path.join(directory, name));
        prune(kind);
        const info = list().find((s) => s.name === name)!;
        logger.info({ snapshot: name, size: info.size }, 'database snapshot taken');
        return info;
      } catch (err) {
        removePartial(partial);
        throw err;
      }
    })();
    finished.catch((err: Error) => logger.error({ err: { message: err.message }, kind }, 'database snapshot failed'));
    return { finished };
  }

  function enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  }

  function schedule(): void {
    if (!directory || intervalMs <= 0 || closed) return;
    const last = list().find((s) => s.kind === 'scheduled');
    const due = last ? Date.parse(last.taken_at) + intervalMs : Date.now() + (options.firstDelayMs ?? 60_000);
    // setTimeout holds at most ~24.8 days; a longer wait is taken in pieces.
    const wait = Math.min(Math.max(0, due - Date.now()), 2_000_000_000);
    timer = setTimeout(() => {
      timer = undefined;
      if (Date.now() < due) return schedule();
      service
        .take('scheduled')
        .catch(() => undefined)
        .finally(schedule);
    }, wait);
    timer.unref();
  }

  const service = {
    enabled,
    directory,
    intervalHours: config.snapshotIntervalHours,
    keep,
    list,

    /** Takes a snapshot and resolves once it is checked and has its final name. */
    take(kind: SnapshotKind): Promise<SnapshotInfo> {
      return enqueue(async () => (await copy(kind)).finished);
    },

    /**
     * The snapshot before an import: resolves once the copy holds the pre-import state (the import
     * may then write); checking and naming it finish in the background.
     */
    beforeImport(): Promise<void> {
      if (!directory) return Promise.resolve();
      let copied!: () => void;
      let failed!: (err: unknown) => void;
      const done = new Promise<void>((resolve, reject) => {
        copied = resolve;
        failed = reject;
      });
      // The next snapshot waits for this one to be checked and named; the import does not.
      enqueue(async () => {
        try {
          const { finished } = await copy('pre-import');
          copied();
          await finished;
        } catch (err) {
          failed(err);
          throw err;
        }
      }).catch(() => undefined);
      return done;
    },

    /** The path of a snapshot by its exact name; 404 for anything else. */
    file(name: string): string {
      if (!directory || !SNAPSHOT_NAME.test(name)) throw notFound('snapshot not found');
      const full = path.join(directory, name);
      if (path.dirname(full) !== directory || !fs.existsSync(full)) throw notFound('snapshot not found');
      return full;
    },

    /** Removes what an interrupted snapshot left and arms the schedule. */
    start(): void {
      if (!directory) {
        logger.info('database snapshots are off: the database is in memory');
        return;
      }
      if (fs.existsSync(directory)) {
        for (const name of fs.readdirSync(directory)) if (PARTIAL.test(name)) fs.rmSync(path.join(directory, name), { force: true });
      }
      schedule();
    },

    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      await queue.catch(() => undefined);
      await copier.close();
    },
  };
  return service;
}
