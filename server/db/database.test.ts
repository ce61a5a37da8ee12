import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { migrate, openDatabase, prepareAll } from './database.js';
import { migrations } from './migrations/index.js';

const dirs: string[] = [];
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-db-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('database', () => {
  it('creates the data folder, uses WAL and foreign keys, records the schema version', () => {
    const file = path.join(tempDir(), 'nested', 'data', 'homefleet.db');
    const db = openDatabase(file);
    expect(fs.existsSync(file)).toBe(true);
    expect(db.prepare('PRAGMA journal_mode').pluck().get()).toBe('wal');
    expect(db.prepare('PRAGMA foreign_keys').pluck().get()).toBe(1);
    expect(db.prepare('PRAGMA user_version').pluck().get()).toBe(migrations.at(-1)!.version);
    db.close();
  });

  it('applies only the migrations a file has not seen, keeping its data', () => {
    const file = path.join(tempDir(), 'h.db');
    const first = openDatabase(file, migrations.slice(0, 1));
    first
      .prepare("INSERT INTO instances (vmid, name, state, stack, created_at, updated_at) VALUES (1, 'kept', 'deployed', 'development', 'x', 'x')")
      .run();
    first.close();
    const next = [...migrations, { version: 999, name: 'test', sql: 'CREATE TABLE later_feature (id INTEGER PRIMARY KEY) STRICT;' }];
    const db = openDatabase(file, next);
    expect(db.prepare('PRAGMA user_version').pluck().get()).toBe(999);
    expect(db.prepare('SELECT name FROM instances').all()).toEqual([{ name: 'kept' }]);
    migrate(db, next); // running again is a no-op
    db.close();
  });

  it('rolls a failing migration back whole and leaves the version where it was', () => {
    const file = path.join(tempDir(), 'h.db');
    openDatabase(file).close();
    const broken = [...migrations, { version: 999, name: 'broken', sql: 'CREATE TABLE half (id INTEGER); SELECT * FROM missing_table;' }];
    expect(() => openDatabase(file, broken)).toThrow(/missing_table/);
    const db = openDatabase(file);
    expect(db.prepare('PRAGMA user_version').pluck().get()).toBe(migrations.at(-1)!.version);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('refuses a file written by a newer release', () => {
    const file = path.join(tempDir(), 'h.db');
    const db = openDatabase(file);
    db.exec('PRAGMA user_version = 9999');
    db.close();
    expect(() => openDatabase(file)).toThrow(/newer than this release supports/);
  });
});

describe('the database file', () => {
  it('is readable by the server user only, and so are its WAL files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-mode-'));
    try {
      const file = path.join(dir, 'homefleet.db');
      const db = openDatabase(file);
      db.exec("CREATE TABLE IF NOT EXISTS t (x); INSERT INTO t VALUES (1)");
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect((fs.statSync(f).mode & 0o777).toString(8), f).toBe('600');
      db.close();
      fs.chmodSync(file, 0o644);
      openDatabase(file).close();
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('statements prepared on first use', () => {
  it('apply the modes set before, and report SQL that does not compile when first used', () => {
    const db = openDatabase(':memory:');
    db.exec('CREATE TABLE t (n INTEGER) STRICT; INSERT INTO t VALUES (1), (2)');
    const plucked = db.prepare('SELECT n FROM t ORDER BY n').pluck();
    const raw = db.prepare('SELECT n, n * 10 AS m FROM t ORDER BY n').raw(true);
    const broken = db.prepare('SELECT n FROM nowhere');
    expect(plucked.all()).toEqual([1, 2]);
    expect(raw.get()).toEqual([1, 10]);
    expect(plucked.reader).toBe(true);
    expect(() => broken.get()).toThrow(/no such table: nowhere/);
    db.close();
  });

  it('every statement the server prepares compiles against the schema', async () => {
    const app = createApp({ dbPath: path.join(tempDir(), 'homefleet.db') });
    try {
      // Those the start itself ran are prepared already; the rest would wait for their first request.
      expect(prepareAll(app.db)).toBeGreaterThan(100);
      expect(prepareAll(app.db)).toBe(0);
    } finally {
      await app.close();
    }
  });
});
