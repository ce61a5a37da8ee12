import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Files and folders that hold secrets (the database and its copies, private keys) are the server
 * user's alone: files 0600, folders 0700, set with chmod after creating them so the umask cannot
 * loosen them.
 */

const POSIX = process.platform !== 'win32';

/** Makes a folder (and its missing parents) that only its owner can enter. */
export function makePrivateDir(dir: string): void {
  const created = fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined && POSIX) fs.chmodSync(dir, 0o700);
}

/** Creates (or empties) a file only its owner can read, before anything is written into it. */
export function createPrivateFile(file: string): void {
  const fd = fs.openSync(file, 'w', 0o600);
  try {
    if (POSIX) fs.fchmodSync(fd, 0o600);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Copies a file into a new private file. Not fs.copyFileSync: it gives the copy the source's mode,
 * so a snapshot someone made 0644 would be restored world-readable.
 */
export function copyPrivate(source: string, dest: string): void {
  createPrivateFile(dest);
  const input = fs.openSync(source, 'r');
  const output = fs.openSync(dest, 'r+');
  try {
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const n = fs.readSync(input, chunk, 0, chunk.length, null);
      if (n === 0) break;
      for (let at = 0; at < n; ) at += fs.writeSync(output, chunk, at, n - at);
    }
  } finally {
    fs.closeSync(input);
    fs.closeSync(output);
  }
}

/** What `tightenModes` did or left about one path, for the start-up log. */
export interface ModeReport {
  path: string;
  /** The mode before, e.g. `0644`. */
  was: string;
  /** `tightened` to owner-only; `left`: readable by others, but not homefleet's to change (see why). */
  action: 'tightened' | 'left';
  why?: string;
}

const octal = (mode: number) => '0' + (mode & 0o777).toString(8);

/**
 * Removes the group and other permissions from each existing path; missing paths are skipped. A
 * folder that is shared by nature (sticky, like /tmp), not the server user's, or the user's home is
 * left as it is and reported: DB_PATH=/tmp/x.db must not lock everyone out of /tmp.
 */
export function tightenModes(paths: readonly string[]): ModeReport[] {
  if (!POSIX) return [];
  const reports: ModeReport[] = [];
  const uid = process.getuid?.();
  for (const target of paths) {
    let st: fs.Stats;
    try {
      st = fs.statSync(target);
    } catch {
      continue;
    }
    if ((st.mode & 0o077) === 0) continue;
    const was = octal(st.mode);
    const resolved = path.resolve(target);
    const why =
      st.isDirectory() && (st.mode & 0o1000) !== 0
        ? 'it is a shared folder (sticky bit)'
        : uid !== undefined && st.uid !== uid
          ? 'it belongs to another user'
          : st.isDirectory() && (resolved === path.parse(resolved).root || resolved === os.homedir())
            ? 'it is a home or root folder'
            : undefined;
    if (why) {
      reports.push({ path: target, was, action: 'left', why });
      continue;
    }
    try {
      fs.chmodSync(target, st.mode & 0o700);
      reports.push({ path: target, was, action: 'tightened' });
    } catch (err) {
      reports.push({ path: target, was, action: 'left', why: (err as NodeJS.ErrnoException).code ?? 'chmod failed' });
    }
  }
  return reports;
}
