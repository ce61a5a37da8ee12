import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { openDatabase, openRetained } from '../db/database.js';
import { migrations } from '../db/migrations/index.js';
import { SNAPSHOT_NAME } from './snapshots.js';
import { ensureBuilt } from '../../test/helpers/build.js';

const root = path.resolve(import.meta.dirname, '../..');
beforeAll(async () => {
  // The run's one build (test/setup/global.ts): building here rewrote dist/ while other files ran it.
  await ensureBuilt();
}, 120_000);
afterAll(() => removeTempDbs());

const restore = (dbPath: string, args: string[]) =>
  execa(process.execPath, ['dist/server/restore.js', ...args], { cwd: root, env: { DB_PATH: dbPath }, extendEnv: false, reject: false, timeout: 30_000 });

/** Everything a restore must bring back, read straight from the file. */
function state(dbPath: string) {
  const db = openRetained(dbPath, { readonly: true });
  try {
    return {
      instances: db.prepare('SELECT * FROM instances ORDER BY id').all(),
      history: db.prepare("SELECT * FROM instance_history WHERE field != 'imported' ORDER BY id").all(),
      accounts: db.prepare('SELECT id, username, role, enabled, password_hash FROM accounts ORDER BY id').all(),
      audit: db.prepare('SELECT * FROM audit_log ORDER BY id').all(),
    };
  } finally {
    db.close();
  }
}

async function until<T>(fn: () => T, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
}

const snapshotsIn = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => SNAPSHOT_NAME.test(n)).sort() : []);

describe('npm run restore -- <snapshot file>', () => {
  it('restores the snapshot taken before an import (registry, accounts, audit); <db>.before-restore undoes it', { timeout: 60_000 }, async () => {
    const dbPath = tempDbPath();
    const dir = path.join(path.dirname(dbPath), 'snapshots');
    let server: TestServer = await startServer({ dbPath });
    await server.client.post('/api/instances', buildInstance({ vmid: 10, name: 'before' }));
    await server.client.put('/api/instances/10', { state: 'degraded' });
    await server.client.post('/api/users', { username: 'pre-import-user', display_name: 'P', role: 'viewer' });
    const preImport = state(dbPath);
    expect((await server.client.post('/api/import', { version: 3, instances: [{ vmid: 20, name: 'after', state: 'deployed', stack: 'development' }] })).status).toBe(200);
    await server.client.post('/api/users', { username: 'post-import-user', display_name: 'Q', role: 'viewer' });
    const [snapshot] = await until(() => snapshotsIn(dir), (n) => n.length === 1);
    expect(snapshot).toMatch(/-pre-import\.db$/);
    await server.stop();
    const postImport = state(dbPath);
    expect(postImport.instances).not.toEqual(preImport.instances);

    // Through npm, as the README says, with the path as typed from the folder it is typed in.
    const result = await execa('npm', ['--prefix', root, 'run', '--silent', 'restore', '--', path.join('snapshots', snapshot!)], {
      cwd: path.dirname(dbPath), env: { DB_PATH: dbPath }, reject: false, timeout: 60_000,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    // The undo names the database too: pasted as shown, it must restore into this one, not the default.
    expect(result.stdout).toContain(`restore: to undo, run: DB_PATH=${path.resolve(dbPath)} npm run restore -- ${dbPath}.before-restore`);
    expect(state(dbPath)).toEqual(preImport);
    expect(fs.existsSync(`${dbPath}.restoring`)).toBe(false);

    // The restored file serves: the old instance with its history, the old accounts.
    server = await startServer({ dbPath });
    expect((await server.client.get('/api/instances/10/history')).body.map((h: { field: string }) => h.field)).toEqual(['state', 'created']);
    expect((await server.client.get('/api/instances/20')).status).toBe(404);
    await server.stop();

    const undo = await restore(dbPath, [`${dbPath}.before-restore`]);
    expect(undo.exitCode, undo.stderr).toBe(0);
    const undone = state(dbPath);
    // The server above signed in again: sessions and audit grew; the post-import registry and accounts are back.
    expect({ ...undone, audit: undone.audit.slice(0, postImport.audit.length) }).toEqual(postImport);
  });

  it('refuses while a server holds the database, and changes nothing', { timeout: 30_000 }, async () => {
    const dbPath = tempDbPath();
    const server = await startServer({ dbPath });
    await server.client.post('/api/instances', buildInstance({ vmid: 1 }));
    const { snapshot } = (await server.client.post('/api/snapshots')).body;
    await server.client.post('/api/instances', buildInstance({ vmid: 2 }));
    const result = await restore(dbPath, [path.join(path.dirname(dbPath), 'snapshots', snapshot.name)]);
    expect([result.exitCode, result.stderr]).toEqual([3, `restore: a homefleet server is using ${dbPath}; stop it, then run the restore again`]);
    expect((await server.client.get('/api/instances')).body.map((i: { vmid: number }) => i.vmid)).toEqual([1, 2]);
    expect(fs.existsSync(`${dbPath}.before-restore`)).toBe(false);
    await server.stop();
  });

  it('refuses a damaged file, a file that is not a homefleet database, a newer schema, a missing file and bad usage', { timeout: 30_000 }, async () => {
    const dbPath = tempDbPath();
    const live = openDatabase(dbPath);
    live.prepare("INSERT INTO instances (vmid, name, state, stack, created_at, updated_at) VALUES (1, 'kept', 'deployed', 'development', 'x', 'x')").run();
    live.close();
    const before = state(dbPath);
    const dir = path.dirname(dbPath);
    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'not a database at all, just some text that is long enough to have a header');
    const other = path.join(dir, 'other.db');
    openRetained(other).exec('CREATE TABLE t (a)');
    const newer = path.join(dir, 'newer.db');
    const n = openDatabase(newer);
    n.exec('PRAGMA user_version = 99');
    n.close();
    const damaged = path.join(dir, 'damaged.db');
    const d = openDatabase(damaged);
    d.exec('PRAGMA journal_mode = DELETE');
    d.transaction(() => {
      for (let i = 1; i <= 3000; i++) d.prepare("INSERT INTO instances (vmid, name, state, stack, created_at, updated_at) VALUES (?, ?, 'deployed', 'development', 'x', 'x')").run(i, `n${i}`);
    })();
    d.close();
    const bytes = fs.readFileSync(damaged);
    bytes.fill(0xff, 4096 * 3, 4096 * 6);
    fs.writeFileSync(damaged, bytes);

    const cases: Array<[string[], number, RegExp]> = [
      [[text], 1, /^restore: .*notes\.txt is not a SQLite database/],
      [[other], 1, /^restore: .*other\.db is not a homefleet database/],
      [[newer], 1, /^restore: .*newer\.db is from a newer homefleet \(schema 99; this release reads up to \d+\); upgrade homefleet first$/],
      [[damaged], 1, /^restore: .*damaged\.db (is damaged|is not a SQLite database)/],
      [[path.join(dir, 'missing.db')], 1, /^restore: no snapshot file at /],
      [[dbPath], 1, /is the database itself/],
      [[], 2, /^restore: usage: npm run restore -- <snapshot file>/],
    ];
    for (const [args, code, message] of cases) {
      const result = await restore(dbPath, args);
      expect(result.exitCode, args.join(' ')).toBe(code);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr.split('\n')).toHaveLength(1);
    }
    expect(state(dbPath)).toEqual(before);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.restoring') || f.includes('before-restore'))).toEqual([]);
  });

  it('migrates a snapshot from an older release', { timeout: 30_000 }, async () => {
    const dbPath = tempDbPath();
    const old = path.join(path.dirname(dbPath), 'old-release.db');
    const db = openDatabase(old, migrations.slice(0, 2));
    db.prepare("INSERT INTO instances (vmid, name, state, stack, created_at, updated_at) VALUES (5, 'old', 'deployed', 'development', 'x', 'x')").run();
    db.close();
    const result = await restore(dbPath, [old]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(`and migrated from schema 2 to ${migrations.at(-1)!.version}`);
    const restored = openRetained(dbPath, { readonly: true });
    expect(restored.prepare('PRAGMA user_version').pluck().get()).toBe(migrations.at(-1)!.version);
    expect(restored.prepare('SELECT name FROM instances').pluck().all()).toEqual(['old']);
    restored.close();
  });
});
