import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../server/db/database.js';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// Attack review (issue 25): `npm run restore` left world-readable copies of the database, and key
// files or folders someone loosened were used without a word. Run with umask 022, as a shell's default.
const root = path.resolve(import.meta.dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-private-files-'));
const SETUP_TOKEN = 'private-files-setup-token';
const modeOf = (file: string) => '0' + (fs.statSync(file).mode & 0o777).toString(8);

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('npm run restore (built), umask 022', () => {
  it('writes <db>.before-restore and the restored database 0600, whatever mode the snapshot file has', async () => {
    const data = path.join(dir, 'restore');
    const dbPath = path.join(data, 'homefleet.db');
    fs.mkdirSync(data, { mode: 0o700 });
    openDatabase(dbPath).close();
    const snapshot = path.join(dir, 'copied-by-hand.db');
    openDatabase(snapshot).close();
    fs.chmodSync(snapshot, 0o644);

    const run = await execa('sh', ['-c', 'umask 022 && exec "$0" dist/server/restore.js "$1"', process.execPath, snapshot], { cwd: root, env: { DB_PATH: dbPath }, extendEnv: false, reject: false });
    expect(run.exitCode, run.stderr).toBe(0);
    expect({ db: modeOf(dbPath), before: modeOf(`${dbPath}.before-restore`) }).toEqual({ db: '0600', before: '0600' });
    const left = fs.readdirSync(data).filter((f) => f.startsWith('homefleet.db'));
    for (const file of left) expect(modeOf(path.join(data, file)), file).toBe('0600');
  });
});

describe('the data folder at start (built server), umask 022', () => {
  it('is made 0700 with its keys 0600 on a fresh start; loosened later, each is tightened at the next start with a warning naming it', async () => {
    const data = path.join(dir, 'data');
    const dbPath = path.join(data, 'homefleet.db');
    // FLEET_TLS=on: the self-signed certificate's key is made too.
    const env = { DB_PATH: dbPath, FLEET_TLS: 'on', FLEET_SETUP_TOKEN: SETUP_TOKEN };
    const first = await startHeadless(env, { umask: '022' });
    const key = path.join(data, 'homefleet-tls.key');
    const signing = path.join(data, 'agent-signing-key.pem');
    const snapshots = path.join(data, 'snapshots');
    const ca = fs.readFileSync(path.join(data, 'homefleet-tls.crt'), 'utf8');
    const cookie = await setUpAdmin(first.local, SETUP_TOKEN, ca);
    expect((await rawRequest(first.local, 'POST', '/api/snapshots', { cookie, origin: first.local }, undefined, { ca })).status).toBe(201);
    const modes = () => ({ data: modeOf(data), snapshots: modeOf(snapshots), key: modeOf(key), signing: modeOf(signing), db: modeOf(dbPath) });
    const tight = { data: '0700', snapshots: '0700', key: '0600', signing: '0600', db: '0600' };
    expect(modes()).toEqual(tight);
    expect(first.log().filter((l) => l.level === 40)).toEqual([]);
    expect((await first.stop()).exitCode).toBe(0);

    for (const folder of [data, snapshots]) fs.chmodSync(folder, 0o755);
    for (const file of [key, signing, dbPath]) fs.chmodSync(file, 0o644);
    const second = await startHeadless(env, { umask: '022' });
    expect(modes()).toEqual(tight);
    const warned = second.log().filter((l) => l.level === 40);
    expect(warned.map((l) => [l.path, l.was]).sort()).toEqual(
      [
        [data, '0755'],
        [snapshots, '0755'],
        [key, '0644'],
        [signing, '0644'],
        [dbPath, '0644'],
      ].sort(),
    );
    for (const line of warned) expect(line.msg).toContain(line.path);
    expect((await rawRequest(second.local, 'GET', '/api/health', {}, undefined, { ca })).status).toBe(200);
    expect((await second.stop()).exitCode).toBe(0);
  });
});
