import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../context.js';
import type { SnapshotInfo, SnapshotKind } from '../contract/backup.js';
import { removeDatabaseFiles } from '../db/database.js';
import { conflict, notFound } from '../errors.js';
import { makePrivateDir } from '../private-files.js';
import type { Task } from '../tasks.js';
import { createCopier } from './snapshot-copier.js';

/**
 * Database snapshots: SQLite online backups of the whole database (registry, accounts, sessions,
 * audit, usage) into `snapshots/` beside the database file. A snapshot is copied and checked
 * (`PRAGMA integrity_check`) in a helper process (snapshot-copier.ts), so requests are never held up
 * by it; it is written to a dot-named `.partial` file and only renamed to its final name once checked
 * and on disk, so a file with a snapshot's name is always a whole, checked database (a crash leaves at
 * most a `.partial`, removed at the next start).
 *
 * Each copy has a `.partial` of its own (a random part in its name). A helper whose server was killed
 * goes on to the end of its integrity check, which it cannot break off, with its file open; a server
 * started again within the same second took the same name, and its helper, writing to the same path
 * and the same `-journal` path, failed with "disk I/O error".
 */

/** `homefleet-2026-11-23T10-15-00Z-scheduled.db` (a `-2`, `-3`, ... when a second one falls in the same second). */
export const SNAPSHOT_NAME = /^homefleet-(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z-(scheduled|manual|pre-import)(?:-(\d{1,4}))?\.db$/;
const PARTIAL = /^\.homefleet-.*\.partial(-journal|-wal|-shm)?$/;
export const PRE_IMPORT_KEEP = 3;

export function snapshotDirectory(dbPath: string): string {
  return path.join(path.dirname(path.resolve(dbPath)), 'snapshots');
}

function parseName(name: string): { kind: SnapshotKind; takenAt: string; seq: number } | undefined {
  const m = SNAPSHOT_NAME.exec(name);
  if (!m) return undefined;
  return { kind: m[5] as SnapshotKind, takenAt: `${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`, seq: m[6] ? Number(m[6]) : 1 };
}

export type SnapshotService = ReturnType<typeof createSnapshotService>;

class NotNeeded extends Error {}

export interface PreImport {
  ready: Promise<void>;
  cancel(): void;
}

export interface SnapshotOptions {
  /** First scheduled snapshot when none exists yet (default one minute after start). */
  firstDelayMs?: number;
  /** The program that runs the snapshot helper, snapshot-worker (default this Node, or Electron as Node). */
  helperCommand?: string;
}

export function createSnapshotService(
  { db, config, logger, commits, tasks }: Pick<AppContext, 'db' | 'config' | 'logger' | 'commits' | 'tasks'>,
  options: SnapshotOptions = {},
) {
  const enabled = config.dbPath !== ':memory:';
  const directory = enabled ? snapshotDirectory(config.dbPath) : null;
  const intervalMs = config.snapshotIntervalHours * 3_600_000;
  const keep: Record<SnapshotKind, number> = { scheduled: config.snapshotKeep, manual: config.snapshotKeep, 'pre-import': PRE_IMPORT_KEEP };
  const copier = createCopier({ db, logger, commits }, options.helperCommand ?? process.execPath);
  let scheduled: Task | undefined;
  let closed = false;
  /** Snapshots run one at a time, in the order asked for. */
  let queue: Promise<unknown> = Promise.resolve();
  /** The last snapshot that failed while no later one succeeded (the snapshot.failed alert reads it). */
  let failure: { at: number; message: string } | null = null;

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
      const clean = name.replace(/^\./, '').replace(/(\.[0-9a-f]{8})?\.partial.*$/, '');
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

  /**
   * Copies the live database into a `.partial` file. Resolves when the copy is complete (it holds
   * the database as it was); `finished` resolves when it has been checked and renamed (or removed).
   */
  async function copy(kind: SnapshotKind, keepIt: () => boolean = () => true): Promise<{ finished: Promise<SnapshotInfo> }> {
    if (!directory) throw conflict('snapshots are off: the database is in memory');
    if (closed) throw conflict('the server is stopping');
    makePrivateDir(directory);
    const name = freeName(kind, new Date());
    const partial = path.join(directory, `.${name}.${randomBytes(4).toString('hex')}.partial`);
    removeDatabaseFiles(partial);
    // A snapshot holds password hashes and job secrets: readable by the server's user only, like the database.
    fs.writeFileSync(partial, '', { mode: 0o600 });
    // Someone waits for a manual snapshot (its request) and for a pre-import copy (the import): only the
    // scheduled one, which nobody waits for, yields the CPU to everything else.
    const copying = copier.copy(path.resolve(config.dbPath), partial, kind === 'manual' ? 'check' : kind === 'scheduled' ? 'nothing' : 'copy');
    copying.checked.catch(() => undefined);
    try {
      await copying.copied;
    } catch (err) {
      removeDatabaseFiles(partial);
      throw err;
    }
    const finished = (async () => {
      try {
        await copying.checked;
        if (!keepIt()) throw new NotNeeded('the import it was taken for did not take place');
        fs.renameSync(partial, path.join(directory, name));
        prune(kind);
        const info = list().find((s) => s.name === name)!;
        logger.info({ snapshot: name, size: info.size }, 'database snapshot taken');
        failure = null;
        return info;
      } catch (err) {
        removeDatabaseFiles(partial);
        throw err;
      }
    })();
    finished.catch((err: Error) => {
      if (err instanceof NotNeeded) return;
      logger.error({ err: { message: err.message }, kind }, 'database snapshot failed');
    });
    return { finished };
  }

  function enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = queue.then(task, task);
    queue = run.catch(() => undefined);
    return run;
  }

  /**
   * When the next scheduled snapshot is due: one interval after the last, or soon after the first
   * start. After a run, never sooner than that first delay: when it failed, the last is still old,
   * and the next try would come at once, again and again.
   */
  function nextDue(afterRun = false): Date {
    const last = list().find((s) => s.kind === 'scheduled');
    const soon = Date.now() + (options.firstDelayMs ?? 60_000);
    const due = last ? Date.parse(last.taken_at) + intervalMs : soon;
    return new Date(afterRun ? Math.max(due, soon) : due);
  }

  function schedule(): void {
    if (!directory || intervalMs <= 0 || closed) return;
    scheduled = tasks.at('snapshots.scheduled', nextDue(), async () => {
      // A failure is logged and kept for the snapshot.failed alert by take(); the schedule goes on.
      await service.take('scheduled').catch(() => undefined);
      if (!closed) scheduled?.reschedule(nextDue(true));
    });
  }

  let waitingManual: { started: boolean; promise: Promise<SnapshotInfo> } | undefined;
  const service = {
    enabled,
    directory,
    intervalHours: config.snapshotIntervalHours,
    keep,
    list,
    lastFailure: () => failure,

    /**
     * Takes a snapshot and resolves once it is checked and has its final name. "Take one now" asked
     * again while one is still waiting for its turn gets that one: it will hold everything both asked
     * for, and repeated clicks (or scripts) do not queue a copy each.
     */
    take(kind: SnapshotKind): Promise<SnapshotInfo> {
      if (kind === 'manual' && waitingManual && !waitingManual.started) return waitingManual.promise;
      const entry = { started: false } as { started: boolean; promise: Promise<SnapshotInfo> };
      entry.promise = enqueue(async () => {
        entry.started = true;
        return (await copy(kind)).finished;
      });
      // Whatever step failed (the folder, the copy, the check), the snapshot.failed alert hears of it.
      entry.promise.catch((err: Error) => {
        if (!(err instanceof NotNeeded)) failure = { at: Date.now(), message: err.message };
      });
      if (kind === 'manual') waitingManual = entry;
      return entry.promise;
    },

    /**
     * The snapshot before an import, started when the request arrives so the copy runs while the body
     * is read and checked: `ready` resolves once the copy holds the pre-import state (the import may
     * then write); checking and naming it finish in the background. `cancel()` when no import follows.
     */
    beforeImport(): PreImport {
      if (!directory) return { ready: Promise.resolve(), cancel() {} };
      let cancelled = false;
      let copied!: () => void;
      let failed!: (err: unknown) => void;
      const ready = new Promise<void>((resolve, reject) => {
        copied = resolve;
        failed = reject;
      });
      ready.catch(() => undefined);
      // The next snapshot waits for this one to be checked and named; the import does not.
      enqueue(async () => {
        try {
          const { finished } = await copy('pre-import', () => !cancelled);
          copied();
          await finished;
        } catch (err) {
          failed(err);
          throw err;
        }
      }).catch(() => undefined);
      return {
        ready,
        cancel() {
          cancelled = true;
        },
      };
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
      scheduled?.cancel();
      await queue.catch(() => undefined);
      await copier.close();
    },
  };
  return service;
}
