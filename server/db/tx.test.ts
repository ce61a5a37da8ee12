import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
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

describe('group commit (the server)', () => {
  function setUpFile() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-group-'));
    const file = path.join(dir, 'group.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE parent (id INTEGER PRIMARY KEY) STRICT; CREATE TABLE t (n INTEGER, parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED) STRICT');
    const other = openDatabase(file);
    const errors: unknown[] = [];
    const transactions = createTransactions(db, (err) => errors.push(err), { group: true });
    const insert = db.prepare<[number, number | null]>('INSERT INTO t (n, parent) VALUES (?, ?)');
    const seen = () => other.prepare('SELECT n FROM t ORDER BY n').pluck().all();
    onTestFinished(() => {
      other.close();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return { db, transactions, insert, seen, errors };
  }
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it('commits the transactions of one turn together, after the turn, then runs their after-commit work', async () => {
    const { transactions, insert, seen } = setUpFile();
    const { transaction, afterCommit, whenCommitted } = transactions;
    const heard: string[] = [];
    const add = transaction((n: number) => {
      insert.run(n, null);
      afterCommit(() => heard.push(`${n} committed, another connection sees ${seen().join(',')}`));
    });
    add(1);
    add(2);
    let answered = false;
    expect(whenCommitted(() => (answered = true))).toBe(true);
    expect(seen()).toEqual([]);
    expect(heard).toEqual([]);
    await nextTurn();
    expect(answered).toBe(true);
    expect(heard).toEqual(['1 committed, another connection sees 1,2', '2 committed, another connection sees 1,2']);
    expect(whenCommitted(() => {})).toBe(false);
  });

  it('rolls back a transaction that throws alone: the rest of its group commits', async () => {
    const { transactions, insert, seen } = setUpFile();
    const heard: number[] = [];
    const add = transactions.transaction((n: number) => {
      insert.run(n, null);
      transactions.afterCommit(() => heard.push(n));
      if (n === 2) throw new Error('refused 2');
    });
    add(1);
    expect(() => add(2)).toThrow('refused 2');
    add(3);
    await nextTurn();
    expect(seen()).toEqual([1, 3]);
    expect(heard).toEqual([1, 3]);
  });

  it('when the COMMIT fails, drops the whole group and tells whoever waits for it', async () => {
    const { db, transactions, insert, seen, errors } = setUpFile();
    const heard: number[] = [];
    const add = transactions.transaction((n: number, parent: number | null) => {
      insert.run(n, parent);
      transactions.afterCommit(() => heard.push(n));
    });
    add(1, null);
    // A deferred foreign key is checked at COMMIT: this one fails the group's.
    add(2, 404);
    let told: unknown = 'not yet';
    transactions.whenCommitted((err) => (told = err));
    await nextTurn();
    expect((told as { code?: string }).code).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
    expect(String(errors[0])).toMatch(/failed to commit and was rolled back/);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([]);
    expect(heard).toEqual([]);
    add(3, null);
    await nextTurn();
    expect(seen()).toEqual([3]);
  });

  it('a group SQLite rolled back by itself is reported to whoever waits; the next transaction opens a new one', async () => {
    const { db, transactions, insert, seen } = setUpFile();
    const add = transactions.transaction((n: number) => void insert.run(n, null));
    add(1);
    let told: unknown = 'not yet';
    transactions.whenCommitted((err) => (told = err));
    // What SQLite does to the whole transaction after an I/O error or a full disk.
    db.prepare('ROLLBACK').run();
    add(2);
    expect(String(told)).toMatch(/no transaction is active/);
    await nextTurn();
    expect(seen()).toEqual([2]);
  });

  it('commits a group that reached its bound before opening the next: a loop that never yields does not grow one without end', async () => {
    const { transactions, insert, seen } = setUpFile();
    const add = transactions.transaction((n: number) => void insert.run(n, null));
    for (let n = 0; n < 600; n++) add(n);
    expect(seen()).toHaveLength(512);
    await nextTurn();
    expect(seen()).toHaveLength(600);
  });

  it('flush commits at once; alone() opens no group until its work is done', async () => {
    const { db, transactions, insert, seen } = setUpFile();
    const add = transactions.transaction((n: number) => void insert.run(n, null));
    add(1);
    transactions.flush();
    expect(seen()).toEqual([1]);
    let release!: () => void;
    const work = transactions.alone(() => new Promise<void>((resolve) => (release = resolve)));
    add(2);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([1, 2]);
    release();
    await work;
    add(3);
    expect(db.inTransaction).toBe(true);
    await nextTurn();
    expect(seen()).toEqual([1, 2, 3]);
  });

  it('exclusive(): the open group commits, a write here fails at once instead of waiting for the lock, paused() lasts as long as the work; one at a time', async () => {
    const { db, transactions, insert, seen } = setUpFile();
    const add = transactions.transaction((n: number) => void insert.run(n, null));
    const second = openDatabase(db.name);
    onTestFinished(() => {
      second.close();
    });
    add(1);
    expect(transactions.paused()).toBeUndefined();
    const order: string[] = [];
    let release!: () => void;
    const first = transactions.exclusive(async () => {
      order.push('first');
      second.exec('BEGIN IMMEDIATE');
      second.exec('INSERT INTO t (n) VALUES (10)');
      await new Promise<void>((resolve) => (release = resolve));
      second.exec('COMMIT');
    });
    const next = transactions.exclusive(async () => void order.push('second'));
    await nextTurn();
    expect(seen()).toEqual([1]);
    const held = transactions.paused();
    expect(held).toBeInstanceOf(Promise);
    // busy_timeout is 5000 on this connection otherwise: the write would hold the thread that the
    // second connection's work needs, for five seconds.
    const started = performance.now();
    expect(() => add(2)).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    expect(performance.now() - started).toBeLessThan(100);
    expect(order).toEqual(['first']);
    release();
    await first;
    await held;
    expect(seen()).toEqual([1, 10]);
    await next;
    expect(order).toEqual(['first', 'second']);
    expect(transactions.paused()).toBeUndefined();
    expect(db.prepare('PRAGMA busy_timeout').pluck().get()).toBe(5000);
    add(3);
    await nextTurn();
    expect(seen()).toEqual([1, 3, 10]);
  });
});
