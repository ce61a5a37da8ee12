import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyPrivate, createPrivateFile, makePrivateDir, tightenModes } from './private-files.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-private-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const modeOf = (p: string) => fs.statSync(p).mode & 0o7777;

describe.skipIf(process.platform === 'win32')('private files', () => {
  it('copies a world-readable file into a 0600 one, byte for byte, past one read chunk', () => {
    const source = path.join(dir, 'loose.db');
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    bytes.write('SQLite format 3');
    fs.writeFileSync(source, bytes, { mode: 0o644 });
    fs.chmodSync(source, 0o644);
    const copy = path.join(dir, 'copy.db');
    fs.writeFileSync(copy, 'longer old content that must go'.repeat(200_000), { mode: 0o666 });
    fs.chmodSync(copy, 0o666);
    copyPrivate(source, copy);
    expect(modeOf(copy)).toBe(0o600);
    expect(fs.readFileSync(copy).equals(bytes)).toBe(true);
  });

  it('makes folders 0700 and empty files 0600, also over an existing loose file', () => {
    const nested = path.join(dir, 'a', 'b');
    makePrivateDir(nested);
    expect(modeOf(nested)).toBe(0o700);
    const file = path.join(dir, 'f');
    fs.writeFileSync(file, 'x', { mode: 0o644 });
    createPrivateFile(file);
    expect([modeOf(file), fs.readFileSync(file, 'utf8')]).toEqual([0o600, '']);
  });

  it('tightens loose files and folders, skips missing and tight ones, and leaves a sticky folder, reporting why', () => {
    const loose = path.join(dir, 'key.pem');
    fs.writeFileSync(loose, 'k');
    fs.chmodSync(loose, 0o644);
    const folder = path.join(dir, 'data');
    fs.mkdirSync(folder);
    fs.chmodSync(folder, 0o755);
    const tight = path.join(dir, 'tight');
    fs.writeFileSync(tight, 't', { mode: 0o600 });
    const shared = path.join(dir, 'shared');
    fs.mkdirSync(shared);
    fs.chmodSync(shared, 0o1777);
    const reports = tightenModes([loose, folder, tight, path.join(dir, 'missing'), shared]);
    expect(reports).toEqual([
      { path: loose, was: '0644', action: 'tightened' },
      { path: folder, was: '0755', action: 'tightened' },
      { path: shared, was: '0777', action: 'left', why: 'it is a shared folder (sticky bit)' },
    ]);
    expect([modeOf(loose), modeOf(folder), modeOf(tight), modeOf(shared)]).toEqual([0o600, 0o700, 0o600, 0o1777]);
  });
});
