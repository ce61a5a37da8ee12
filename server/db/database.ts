import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrations, type Migration } from './migrations/index.js';

export type Db = Database.Database;

/**
 * Opens (creating the folder when missing) and migrates the database.
 * `:memory:` gives a private in-memory database, as the tests use.
 */
export function openDatabase(dbPath: string, list: readonly Migration[] = migrations): Db {
  if (dbPath !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(dbPath)), { recursive: true });
  const db = new Database(dbPath);
  try {
    if (dbPath !== ':memory:') db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    migrate(db, list);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * Applies the migrations the file has not seen yet, each in its own transaction with the
 * version bump, so the schema version lives inside the file it describes.
 */
export function migrate(db: Db, list: readonly Migration[] = migrations): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = list.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new Error(`database schema version ${current} is newer than this release supports (${latest}); upgrade homefleet`);
  }
  for (const m of list) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
}
