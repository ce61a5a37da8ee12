import os from 'node:os';
import { runHelper } from '../builtin.js';
import { openRetained } from '../db/database.js';
import { checkCopy } from './snapshot-check.js';
import { CHECK_AT_LOW_PRIORITY } from './snapshot-helper-args.js';

/**
 * The snapshot helper program, started by snapshot-copier.ts as `<node> snapshot-worker.js <source>
 * <dest>` with an IPC channel. It copies the database in one backup step (inside one read transaction,
 * so a consistent picture of one moment; in WAL mode it does not block the server's writes), says
 * `copied`, then checks the copy (at the lowest CPU priority when given --check-at-low-priority: nobody
 * waits for that check) and says `checked`, or `failed` with why.
 * Built as its own entry point: dist/server/snapshot-worker.js, and dist/electron/snapshot-worker.cjs
 * for the desktop app.
 */

export type WorkerMessage = { stage: 'copied' } | { stage: 'checked' } | { stage: 'failed'; detail: string };

async function run(source: string, dest: string, checkAtLowPriority: boolean, send: (message: WorkerMessage) => void): Promise<void> {
  const db = openRetained(source, { fileMustExist: true, timeout: 5000 });
  try {
    await db.backup(dest, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
  send({ stage: 'copied' });
  // An import waits for the copy only; a person's "take one now" waits for the check too.
  if (checkAtLowPriority) {
    try {
      os.setPriority(19);
    } catch {
      // Not allowed here: it runs at the priority it has.
    }
  }
  checkCopy(dest);
  send({ stage: 'checked' });
}

const [source, dest, option] = process.argv.slice(2);
if (!process.send || !source || !dest) {
  process.stderr.write('usage: snapshot-worker <source database> <copy>, started by the server with an IPC channel\n');
  process.exit(2);
}
const send = (message: WorkerMessage) => void process.send!(message);
// A server that went away ends it, leaving at most a .partial file.
runHelper(() => run(source, dest, option === CHECK_AT_LOW_PRIORITY, send));
