import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrations, type Migration } from './migrations/index.js';

export type Db = Database.Database;

/**
 * better-sqlite3 12 aborts the whole process on Node >= 24.19 when the garbage collector finalizes
 * one of its databases or statements outside a JavaScript context (its ObjectWrap destructor trips
 * `Assertion failed: (env) != nullptr`; fixed in better-sqlite3 13, which needs Node 22). Until
 * Node 20 support ends, no database or statement of ours is ever left to the collector: each is
 * kept reachable here for the life of the process. homefleet prepares its statements once, so this
 * holds a bounded set; `pragma()` is avoided because it prepares a throwaway statement per call.
 */
const retained: object[] = [];

/** The statements of each database not prepared yet: `prepareAll` prepares them (tests check every one compiles). */
const unprepared = new WeakMap<Db, Set<LazyStatement>>();

/**
 * A statement prepared on first use. Services prepare theirs when they are built, ~200 at every
 * start, and SQLite's parse and plan of them was ~4 ms of a ~75 ms start; most wait for a request
 * that may never come. Modes set before (pluck, raw, expand, safeIntegers) are applied on preparing.
 */
class LazyStatement {
  #statement: Database.Statement | undefined;
  readonly #modes: Array<(statement: Database.Statement) => void> = [];

  constructor(
    readonly database: Db,
    readonly source: string,
    private readonly prepareNow: (source: string) => Database.Statement,
  ) {}

  prepared(): Database.Statement {
    if (this.#statement) return this.#statement;
    const statement = this.prepareNow(this.source);
    for (const mode of this.#modes) mode(statement);
    retained.push(statement);
    unprepared.get(this.database)?.delete(this);
    return (this.#statement = statement);
  }

  #mode(apply: (statement: Database.Statement) => void): this {
    if (this.#statement) apply(this.#statement);
    else this.#modes.push(apply);
    return this;
  }

  run(...params: unknown[]) {
    return this.prepared().run(...params);
  }
  get(...params: unknown[]) {
    return this.prepared().get(...params);
  }
  all(...params: unknown[]) {
    return this.prepared().all(...params);
  }
  iterate(...params: unknown[]) {
    return this.prepared().iterate(...params);
  }
  bind(...params: unknown[]): this {
    this.prepared().bind(...params);
    return this;
  }
  columns() {
    return this.prepared().columns();
  }
  get reader(): boolean {
    return this.prepared().reader;
  }
  get readonly(): boolean {
    return this.prepared().readonly;
  }
  get busy(): boolean {
    return this.#statement?.busy ?? false;
  }
  pluck(...on: [boolean?]): this {
    return this.#mode((s) => s.pluck(...(on as [boolean])));
  }
  expand(...on: [boolean?]): this {
    return this.#mode((s) => s.expand(...(on as [boolean])));
  }
  raw(...on: [boolean?]): this {
    return this.#mode((s) => s.raw(...(on as [boolean])));
  }
  safeIntegers(...on: [boolean?]): this {
    return this.#mode((s) => s.safeIntegers(...(on as [boolean])));
  }
}

/** Opens a better-sqlite3 database whose statements are prepared on first use and never garbage-collected (see `retained`). */
export function openRetained(dbPath: string | Buffer, options?: Database.Options): Db {
  const db = new Database(dbPath, options);
  retained.push(db);
  const prepareNow = db.prepare.bind(db);
  const waiting = new Set<LazyStatement>();
  unprepared.set(db, waiting);
  db.prepare = ((source: string) => {
    const statement = new LazyStatement(db, source, prepareNow);
    waiting.add(statement);
    return statement;
  }) as unknown as Db['prepare'];
  return db;
}

/** Prepares every statement of `db` not prepared yet; throws SQLite's error for one that does not compile. Returns how many. */
export function prepareAll(db: Db): number {
  const waiting = [...(unprepared.get(db) ?? [])];
  for (const statement of waiting) statement.prepared();
  return waiting.length;
}

/** Deletes a database file with the journal, WAL and shared-memory files SQLite keeps beside it; missing ones are fine. */
export function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
}

/**
 * Opens (creating the folder when missing) and migrates the database.
 * `:memory:` gives a private in-memory database, as the tests use.
 */
export function openDatabase(dbPath: string, list: readonly Migration[] = migrations): Db {
  if (dbPath !== ':memory:') {
    fs.mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true });
    keepPrivate(dbPath);
  }
  const db = dbPath === ':memory:' && list === migrations ? openRetained(migratedImage()) : openRetained(dbPath);
  try {
    if (dbPath !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
    migrate(db, list);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

let image: Buffer | undefined;
/**
 * An empty database with every migration applied, serialized once per process: a new `:memory:`
 * database (the tests open thousands) starts as a copy of it. Running the migrations was two thirds
 * of an app's start there, and a fifth of the test suite's in-process CPU.
 */
function migratedImage(): Buffer {
  if (image) return image;
  const db = openRetained(':memory:');
  migrate(db);
  image = db.serialize();
  db.close();
  return image;
}

/**
 * The database holds password hashes and job secrets: readable and writable by the server's user
 * only. SQLite gives its -wal and -shm files the database file's mode, so setting it here covers them.
 */
function keepPrivate(dbPath: string): void {
  try {
    fs.writeFileSync(dbPath, '', { mode: 0o600, flag: 'wx' });
  } catch {
    // It exists already: tighten a mode an earlier release left at the umask's default.
    try {
      if ((fs.statSync(dbPath).mode & 0o077) !== 0) fs.chmodSync(dbPath, 0o600);
    } catch {
      // Not ours to change (another owner, a read-only mount): open it as it is.
    }
  }
}

/**
 * Applies the migrations the file has not seen yet, each in its own transaction with the
 * version bump, so the schema version lives inside the file it describes.
 */
export function migrate(db: Db, list: readonly Migration[] = migrations): void {
  const current = db.prepare('PRAGMA user_version').pluck().get() as number;
  const latest = list.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new Error(`database schema version ${current} is newer than this release supports (${latest}); upgrade homefleet`);
  }
  for (const m of list) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.exec(`PRAGMA user_version = ${m.version}`);
    })();
  }
}
