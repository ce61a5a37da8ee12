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
}

/**
 * PocketBase's `runInTransaction` with its `afterFuncs`, for better-sqlite3: transactions never span
 * an `await`, so one stack of frames per database is enough. A callback that throws is reported to
 * `onError` and does not stop the ones after it: the change has committed whatever a listener does.
 */
export function createTransactions(db: Db, onError: (err: unknown) => void): Transactions {
  const frames: Callback[][] = [];

  function runAll(callbacks: Callback[]): void {
    for (const cb of callbacks) {
      try {
        cb();
      } catch (err) {
        onError(err);
      }
    }
  }

  return {
    transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
      const wrapped = db.transaction(fn);
      return (...args: A): R => {
        frames.push([]);
        let result: R;
        try {
          // BEGIN IMMEDIATE: the write lock is taken first, waiting out another process's write (the
          // recovery command, say) for busy_timeout. A deferred transaction that reads, then writes after
          // that process wrote, fails at once with SQLITE_BUSY instead. Nested calls are savepoints.
          result = wrapped.immediate(...args);
        } catch (err) {
          frames.pop();
          throw err;
        }
        const done = frames.pop()!;
        const outer = frames.at(-1);
        if (outer) outer.push(...done);
        // Inside a transaction opened with db.transaction() directly, "after commit" would come before it.
        else if (db.inTransaction) throw new Error('a transaction opened through transactions.transaction inside one that was not');
        else runAll(done);
        return result;
      };
    },

    afterCommit(cb: Callback): void {
      const frame = frames.at(-1);
      if (frame) frame.push(cb);
      // A transaction opened with db.transaction() directly would announce before its commit.
      else if (db.inTransaction) throw new Error('afterCommit inside a transaction not opened through transactions.transaction');
      else runAll([cb]);
    },
  };
}
