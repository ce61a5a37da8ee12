import type { Db } from './database.js';

type Callback = () => void;

export interface Transactions {
  /**
   * `db.transaction(fn)` with after-commit work: what `afterCommit` registers while `fn` runs is run
   * once the outermost transaction has committed, in order, and dropped when it (or the savepoint of a
   * nested call) rolls back. The one way homefleet opens a transaction.
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  /**
   * Runs `cb` once the current transaction commits; at once when none is open. Announcements (live
   * events, job triggers) go through here, so nobody hears of a change that rolled back.
   */
  afterCommit(cb: Callback): void;
  /**
   * With group commit: calls `cb` once the open group has committed (`cb(err)` when its COMMIT failed
   * and every change in it is gone), and returns true; returns false at once when no group is open.
   */
  whenCommitted(cb: (err?: unknown) => void): boolean;
  /** Commits the open group now: before the database closes. Not from inside a transaction. */
  flush(): void;
  /** Commits the open group, then runs `work` with no group opened until it settles (an online backup on this connection). */
  alone<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs `work`, which holds the write lock through another connection to this database across
   * turns of the event loop (the import helper's), with this connection kept from writing:
   * no group opens, and a write here fails at once with SQLITE_BUSY instead of holding the event
   * loop for busy_timeout while it waits. `paused()` lets the HTTP layer and the task runner hold
   * their writes until it settles. One at a time, in the order asked.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** While `exclusive` work runs: a promise of its end; otherwise undefined, and writes go ahead. */
  paused(): Promise<void> | undefined;
}

/** The most transactions one group takes (16 clients writing at once make groups of a few). */
const GROUP_BOUND = 256;

interface Group {
  /** Transactions in the group so far. */
  size: number;
  after: Callback[];
  waiting: ((err?: unknown) => void)[];
}

/**
 * PocketBase's `runInTransaction` with its `afterFuncs`, for better-sqlite3: transactions never span
 * an `await`, so one stack of frames per database is enough. A callback that throws is reported to
 * `onError` and does not stop the ones after it: the change has committed whatever a listener does.
 *
 * `group: true` (the server) adds group commit. A COMMIT in WAL mode writes every page the transaction
 * touched to the log, and most of a create's cost was that write, repeated for the same few pages
 * (the tables' last leaves, the indexes' ends) by each of the requests one turn of the event loop had
 * read. So the first transaction of a turn opens a group (BEGIN IMMEDIATE) and each transaction of the
 * turn runs in it as a savepoint of its own: one that throws is rolled back alone, as before; the
 * group commits once, in the check phase after the turn's I/O (setImmediate), and then runs the
 * after-commit work of all of them. Nothing is answered before that: the HTTP layer holds each
 * response until `whenCommitted` (server/http/after-commit.ts), so a client never hears of a change
 * that is not in the database, and a failed COMMIT answers every request of the group with an error.
 * The group holds the write lock for one turn; another process (the recovery command) waits for it
 * within busy_timeout as it waited for a single transaction.
 */
export function createTransactions(db: Db, onError: (err: unknown) => void, { group: grouping = false } = {}): Transactions {
  const frames: Callback[][] = [];
  let open: Group | null = null;
  let alone = 0;
  /** The end of the last `exclusive` work asked for, and of the one running (while one runs). */
  let exclusiveTurn: Promise<void> = Promise.resolve();
  let pause: Promise<void> | undefined;
  const begin = grouping ? db.prepare('BEGIN IMMEDIATE') : undefined;
  const commit = grouping ? db.prepare('COMMIT') : undefined;
  const rollback = grouping ? db.prepare('ROLLBACK') : undefined;
  const busyTimeout = db.prepare<[], number>('PRAGMA busy_timeout').pluck();

  function runAll(callbacks: Callback[]): void {
    for (const cb of callbacks) {
      try {
        cb();
      } catch (err) {
        onError(err);
      }
    }
  }

  function settle(): void {
    const group = open;
    if (!group) return;
    open = null;
    let failure: unknown;
    try {
      commit!.run();
    } catch (err) {
      failure = err;
      onError(new Error(`a group of transactions failed to commit and was rolled back: ${(err as Error).message}`));
      try {
        if (db.inTransaction) rollback!.run();
      } catch (rollbackErr) {
        onError(rollbackErr);
      }
    }
    if (failure === undefined) runAll(group.after);
    runAll(group.waiting.map((cb) => () => cb(failure)));
  }

  /** The group this transaction joins: the open one, or a new one when none is open and grouping is on. */
  function joinGroup(): Group | null {
    // SQLite rolls the whole transaction back on some errors (a full disk): that group is lost, and
    // whoever waits for it hears so now, before a new one opens.
    if (open && !db.inTransaction) settle();
    // A loop that writes without yielding to the event loop would grow one group without end: its
    // journal, and the wait of the first answer in it. Past a bound the group commits and a new one opens.
    if (open && open.size >= GROUP_BOUND) settle();
    if (open) {
      open.size += 1;
      return open;
    }
    if (!grouping || alone > 0 || db.inTransaction) return null;
    begin!.run();
    open = { after: [], waiting: [], size: 1 };
    setImmediate(settle);
    return open;
  }

  return {
    transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
      const wrapped = db.transaction(fn);
      return (...args: A): R => {
        const group = frames.length === 0 ? joinGroup() : open;
        frames.push([]);
        let result: R;
        try {
          // Inside a group (or an outer transaction) better-sqlite3 makes this a savepoint. Alone it
          // is BEGIN IMMEDIATE: the write lock is taken first, waiting out another process's write (the
          // recovery command, say) for busy_timeout. A deferred transaction that reads, then writes after
          // that process wrote, fails at once with SQLITE_BUSY instead.
          result = db.inTransaction ? wrapped(...args) : wrapped.immediate(...args);
        } catch (err) {
          frames.pop();
          throw err;
        }
        const done = frames.pop()!;
        const outer = frames.at(-1);
        if (outer) outer.push(...done);
        else if (group) group.after.push(...done);
        // Inside a transaction opened with db.transaction() directly, "after commit" would come before it.
        else if (db.inTransaction) throw new Error('a transaction opened through transactions.transaction inside one that was not');
        else runAll(done);
        return result;
      };
    },

    afterCommit(cb: Callback): void {
      const frame = frames.at(-1);
      if (frame) frame.push(cb);
      else if (open) open.after.push(cb);
      // A transaction opened with db.transaction() directly would announce before its commit.
      else if (db.inTransaction) throw new Error('afterCommit inside a transaction not opened through transactions.transaction');
      else runAll([cb]);
    },

    whenCommitted(cb: (err?: unknown) => void): boolean {
      if (!open) return false;
      open.waiting.push(cb);
      return true;
    },

    flush(): void {
      if (frames.length) throw new Error('flush inside a transaction');
      settle();
    },

    async alone<T>(work: () => Promise<T>): Promise<T> {
      if (frames.length) throw new Error('alone inside a transaction');
      settle();
      alone += 1;
      try {
        return await work();
      } finally {
        alone -= 1;
      }
    },

    async exclusive<T>(work: () => Promise<T>): Promise<T> {
      if (frames.length) throw new Error('exclusive inside a transaction');
      const previous = exclusiveTurn;
      let release!: () => void;
      const mine = new Promise<void>((resolve) => (release = resolve));
      exclusiveTurn = previous.then(() => mine);
      await previous;
      settle();
      alone += 1;
      const waited = busyTimeout.get()!;
      db.exec('PRAGMA busy_timeout = 0');
      pause = mine;
      try {
        return await work();
      } finally {
        db.exec(`PRAGMA busy_timeout = ${waited}`);
        alone -= 1;
        pause = undefined;
        release();
      }
    },

    paused: () => pause,
  };
}
