import fs from 'node:fs';
import path from 'node:path';
import { migrate, openRetained, removeDatabaseFiles, type Db } from '../db/database.js';
import { migrations } from '../db/migrations/index.js';
import { copyPrivate, createPrivateFile, makePrivateDir } from '../private-files.js';

/**
 * `npm run restore -- <snapshot file>`: replaces the database at DB_PATH with a snapshot, on the
 * host, while no server has the database open. The current database is first copied whole (its WAL
 * included) to `<db>.before-restore`, so a restore can itself be undone by restoring that file.
 *
 * Crash safety: the snapshot is copied and checked under a temporary name (`<db>.restoring`) and
 * moved over the database with one rename, after the current database's WAL has been checkpointed
 * into it and removed; a kill at any point leaves either the old database or the restored one whole.
 *
 * Exit codes: 0 restored; 1 refused (bad snapshot, I/O error); 2 usage; 3 a server holds the database.
 */

export class RestoreError extends Error {
  constructor(
    message: string,
    readonly code = 1,
  ) {
    super(message);
  }
}

const LATEST = migrations.at(-1)!.version;

function fsyncPath(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens a database file that is not in use, or says what it is instead. */
function openChecked(file: string, what: string): Db {
  let db: Db;
  try {
    db = openRetained(file, { timeout: 0 });
    db.prepare('PRAGMA schema_version').get();
  } catch (err) {
    throw new RestoreError(`${what} is not a SQLite database (${(err as Error).message})`);
  }
  return db;
}

/** Checks a copy of the snapshot: whole, a homefleet database, and a schema this release can read. */
function checkSnapshot(file: string, shown: string): number {
  const db = openChecked(file, shown);
  try {
    let check: string[];
    try {
      check = db.prepare('PRAGMA integrity_check').pluck().all() as string[];
    } catch (err) {
      throw new RestoreError(`${shown} is damaged (${(err as Error).message})`);
    }
    if (check.length !== 1 || check[0] !== 'ok') throw new RestoreError(`${shown} is damaged: integrity check says ${check.slice(0, 3).join('; ')}`);
    const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
    if (!tables.has('instances') || !tables.has('accounts')) throw new RestoreError(`${shown} is not a homefleet database (no instances or accounts table)`);
    const version = db.prepare('PRAGMA user_version').pluck().get() as number;
    if (version > LATEST) {
      throw new RestoreError(`${shown} is from a newer homefleet (schema ${version}; this release reads up to ${LATEST}); upgrade homefleet first`);
    }
    // One self-contained file, whatever mode the snapshot was in.
    db.prepare('PRAGMA journal_mode = DELETE').get();
    return version;
  } finally {
    db.close();
  }
}

/**
 * Takes the database for this process alone: in WAL mode every open connection (a running server)
 * holds a shared lock on the file, so an exclusive lock that cannot be had at once means a server has it.
 * The lock is kept until the connection is closed.
 */
function lockLive(dbPath: string): Db {
  const db = openChecked(dbPath, `the current database ${dbPath}`);
  try {
    db.prepare('PRAGMA locking_mode = EXCLUSIVE').get();
    db.exec('BEGIN EXCLUSIVE; COMMIT;');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new RestoreError(`a homefleet server is using ${dbPath}; stop it, then run the restore again`, 3);
    }
    throw err;
  }
  return db;
}

export interface RestoreResult {
  dbPath: string;
  beforeRestore: string | null;
  schemaFrom: number;
  schemaNow: number;
}

export async function restoreSnapshot(snapshot: string, dbPath: string, say: (line: string) => void = () => {}): Promise<RestoreResult> {
  if (dbPath === ':memory:') throw new RestoreError('DB_PATH is :memory:; set it to the database file to restore into');
  const db = path.resolve(dbPath);
  const source = path.resolve(snapshot);
  if (!fs.existsSync(source) || !fs.statSync(source).isFile()) throw new RestoreError(`no snapshot file at ${snapshot}`);
  if (source === db) throw new RestoreError(`${snapshot} is the database itself; name a snapshot file`);
  makePrivateDir(path.dirname(db));

  const live = fs.existsSync(db) ? lockLive(db) : null;
  const restoring = `${db}.restoring`;
  const before = `${db}.before-restore`;
  let schemaFrom: number;
  try {
    // 1. The snapshot, copied beside the database and checked there (never changed in place). The
    // copy, and so the restored database, is 0600 whatever mode the snapshot file has.
    removeDatabaseFiles(restoring);
    copyPrivate(source, restoring);
    schemaFrom = checkSnapshot(restoring, snapshot);
    fsyncPath(restoring);
    say(`checked ${snapshot}: integrity ok, schema ${schemaFrom}`);

    // 2. The current database, whole (WAL included), kept aside so this restore can be undone.
    if (live) {
      const partial = `${before}.partial`;
      removeDatabaseFiles(partial);
      // SQLite writes into the file as it finds it: made 0600 first, so the copy is never readable by others.
      createPrivateFile(partial);
      await live.backup(partial);
      const copy = openChecked(partial, partial);
      try {
        copy.prepare('PRAGMA journal_mode = DELETE').get();
      } finally {
        copy.close();
      }
      fsyncPath(partial);
      fs.renameSync(partial, before);
      say(`kept the current database as ${before}`);

      // 3. Everything in the WAL into the file, then no WAL left that could be applied to the new file.
      live.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get();
      live.close();
      fs.rmSync(`${db}-wal`, { force: true });
      fs.rmSync(`${db}-shm`, { force: true });
    }

    // 4. One rename: the database is the old file or the restored one, never a mix.
    fs.renameSync(restoring, db);
    try {
      fsyncPath(path.dirname(db));
    } catch {
      // Some file systems cannot fsync a folder; the rename is still atomic.
    }
  } catch (err) {
    if (live?.open) live.close();
    removeDatabaseFiles(restoring);
    throw err;
  }

  // 5. Migrations newer than the snapshot, as the server would apply them at start.
  const restored = openRetained(db);
  try {
    restored.exec('PRAGMA journal_mode = WAL');
    migrate(restored);
    const schemaNow = restored.prepare('PRAGMA user_version').pluck().get() as number;
    return { dbPath: db, beforeRestore: live ? before : null, schemaFrom, schemaNow };
  } finally {
    restored.close();
  }
}
