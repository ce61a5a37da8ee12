import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const dirs: string[] = [];

/** A fresh database file path in its own temp folder; `removeTempDbs()` deletes them all. */
export function tempDbPath(name = 'homefleet.db'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-test-'));
  dirs.push(dir);
  return path.join(dir, name);
}

export function removeTempDbs(): void {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
