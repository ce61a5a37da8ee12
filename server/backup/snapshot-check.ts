import fs from 'node:fs';
import { openRetained } from '../db/database.js';

/**
 * Checks a fresh copy (`PRAGMA integrity_check`), makes it a self-contained file (no -wal needed beside
 * it to open it elsewhere) and flushes it to disk; throws when the check fails. Run by the snapshot
 * helper, and by the server itself when no helper can run.
 */
export function checkCopy(file: string): void {
  const db = openRetained(file, { fileMustExist: true, timeout: 0 });
  let rows: unknown[];
  try {
    rows = db.prepare('PRAGMA integrity_check').pluck().all();
    db.exec('PRAGMA journal_mode = DELETE');
  } finally {
    db.close();
  }
  if (rows.length !== 1 || rows[0] !== 'ok') throw new Error(`the snapshot failed its integrity check (${rows.slice(0, 3).join('; ')})`);
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
