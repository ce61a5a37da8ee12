import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { createTransactions } from './tx.js';

function setUp() {
  const db = openDatabase(':memory:');
  db.exec('CREATE TABLE t (n INTEGER) STRICT');
  const errors: unknown[] = [];
  const { transaction, afterCommit } = createTransactions(db, (err) => errors.push(err));
  const insert = db.prepare<[number]>('INSERT INTO t (n) VALUES (?)');
  const rows = () => db.prepare('SELECT n FROM t ORDER BY n').pluck().all();
  return { db, transaction, afterCommit, insert, rows, errors };
}

describe('transactions with after-commit work', () => {
  it('runs what was registered once the outermost transaction commits, in order', () => {
    const { transaction, afterCommit, insert, rows } = setUp();
    const heard: string[] = [];
    const inner = transaction(() => {
      insert.run(2);
      afterCommit(() => heard.push(`inner saw ${rows().join(',')}`));
    });
    transaction(() => {
      insert.run(1);
      afterCommit(() => heard.push('outer'));
      inner();
      expect(heard).toEqual([]);
    })();
    expect(heard).toEqual(['outer', 'inner saw 1,2']);
  });

  it('drops the work of a transaction that rolled back, and of a nested one only its own', () => {
    const { transaction, afterCommit, insert, rows } = setUp();
    const heard: number[] = [];
    const failing = transaction((n: number) => {
      insert.run(n);
      afterCommit(() => heard.push(n));
      throw new Error(`refused ${n}`);
    });
    expect(() => failing(1)).toThrow('refused 1');
    transaction(() => {
      insert.run(2);
      afterCommit(() => heard.push(2));
      expect(() => failing(3)).toThrow('refused 3');
    })();
    expect(heard).toEqual([2]);
    expect(rows()).toEqual([2]);
  });

  it('runs at once outside a transaction, and a callback that throws keeps the others', () => {
    const { transaction, afterCommit, errors } = setUp();
    const heard: number[] = [];
    afterCommit(() => heard.push(1));
    expect(heard).toEqual([1]);
    transaction(() => {
      afterCommit(() => {
        throw new Error('a listener failed');
      });
      afterCommit(() => heard.push(2));
    })();
    expect(heard).toEqual([1, 2]);
    expect(errors).toHaveLength(1);
  });

  it('takes the write lock first: another connection writing between its read and its write cannot make it fail', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-tx-'));
    try {
      const file = path.join(dir, 'tx.db');
      const db = openDatabase(file);
      db.exec('CREATE TABLE t (n INTEGER) STRICT');
      const other = openDatabase(file);
      other.exec('PRAGMA busy_timeout = 0');
      const { transaction } = createTransactions(db, () => {});
      let refused: unknown;
      transaction(() => {
        const count = db.prepare('SELECT count(*) FROM t').pluck().get() as number;
        try {
          other.prepare('INSERT INTO t (n) VALUES (99)').run();
        } catch (err) {
          refused = err;
        }
        db.prepare('INSERT INTO t (n) VALUES (?)').run(count + 1);
      })();
      expect((refused as { code?: string } | undefined)?.code).toBe('SQLITE_BUSY');
      expect(db.prepare('SELECT n FROM t').pluck().all()).toEqual([1]);
      other.close();
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses after-commit work inside a transaction it did not open, which would run before that commit', () => {
    const { db, transaction, afterCommit } = setUp();
    expect(() => db.transaction(() => afterCommit(() => {}))()).toThrow(/afterCommit inside a transaction/);
    expect(() => db.transaction(() => transaction(() => {})())()).toThrow(/inside one that was not/);
  });
});
