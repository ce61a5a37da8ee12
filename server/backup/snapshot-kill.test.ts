
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../../test/helpers/http.js';
import { listeningUrl } from '../../test/helpers/listening.js';
import { logIn, startServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { createApp } from '../app.js';
import { openDatabase, openRetained } from '../db/database.js';
import { SNAPSHOT_NAME } from './snapshots.js';
import { ensureBuilt } from '../../test/helpers/build.js';

const root = path.resolve(import.meta.dirname, '../..');
beforeAll(async () => {
  // The run's one build (test/setup/global.ts): building here rewrote dist/ while other files ran it.
  await ensureBuilt();
}, 120_000);
afterAll(() => removeTempDbs());

const PASSWORD = 'kill-test-password';

/** A database big enough that a snapshot or a restore takes a while: 150,000 instances, each with a history entry. */
async function bigDatabase(dbPath: string, name: string): Promise<void> {
  const app = createApp({ dbPath, config: { snapshotIntervalHours: 0 } });
  await app.accounts.create({ username: 'admin', display_name: 'Admin', role: 'administrator', password: PASSWORD });
  await app.close();
  const db = openDatabase(dbPath);
  db.exec(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150000)
    INSERT INTO instances (vmid, name, state, stack, tailscale_ip, created_at, updated_at)
      SELECT i, '${name}-' || i || '-with-a-longer-name', 'deployed', 'development', '100.64.0.1', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM n;
    INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by)
      SELECT id, 'state', 'testing', 'deployed', '2026-01-02T00:00:00.000Z', 'admin' FROM instances;
  `);
  db.close();
}

function summary(dbPath: string) {
  const db = openRetained(dbPath, { readonly: true });
  try {
    return {
      integrity: db.prepare('PRAGMA integrity_check').pluck().get(),
      instances: db.prepare('SELECT count(*) FROM instances').pluck().get(),
      first: db.prepare('SELECT name FROM instances ORDER BY id LIMIT 1').pluck().get(),
      history: db.prepare('SELECT count(*) FROM instance_history').pluck().get(),
      accounts: db.prepare('SELECT username FROM accounts ORDER BY id').pluck().all(),
    };
  } finally {
    db.close();
  }
}

const exited = (child: ChildProcess) =>
  new Promise<NodeJS.Signals | number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode ?? child.exitCode);
    else child.on('exit', (code, signal) => resolve(signal ?? code));
  });

/** Polls every millisecond until `ready()` holds, then SIGKILLs the child. Fails if the child ends first. */
async function killWhen(child: ChildProcess, ready: () => boolean, what: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (ready()) {
        clearInterval(poll);
        child.kill('SIGKILL');
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(poll);
        reject(new Error(`the child finished before ${what}`));
      }
    }, 1);
  });
  expect(await exited(child)).toBe('SIGKILL');
}

const partials = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.includes('.partial')) : []);
const snapshots = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => SNAPSHOT_NAME.test(n)) : []);

describe('SIGKILL during a snapshot', () => {
  it('leaves the live database whole and no file that looks like a snapshot; the next start clears the remains', { timeout: 120_000 }, async () => {
    const dbPath = tempDbPath();
    const dir = path.join(path.dirname(dbPath), 'snapshots');
    await bigDatabase(dbPath, 'live');
    const before = summary(dbPath);
    const liveSize = fs.statSync(dbPath).size;

    // Twice: once while the pages are being copied, once while the copy is being checked.
    for (const moment of ['copying', 'checking'] as const) {
      const child = spawn(process.execPath, ['dist/server/main.js'], {
        cwd: root,
        env: { DB_PATH: dbPath, PORT: '0', HOST: '127.0.0.1', FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_SNAPSHOT_INTERVAL_HOURS: '0', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const url = await listeningUrl(child);
      const client = await logIn(new TestClient(url), 'admin', PASSWORD);
      // On a busy machine a snapshot can finish between two looks: then it is removed and taken again.
      let finished = false;
      const take = (): Promise<unknown> =>
        client.post('/api/snapshots').then(
          (res) => {
            if (res.status !== 201) return undefined;
            for (const name of snapshots(dir)) fs.rmSync(path.join(dir, name));
            finished = true;
            return take();
          },
          () => undefined,
        );
      const taking = take();
      await killWhen(
        child,
        () => {
          if (finished) console.log(`a snapshot finished before it could be killed while ${moment}; taking another`);
          finished = false;
          const p = partials(dir).find((n) => n.endsWith('.partial'));
          if (!p) return false;
          if (moment === 'copying') return true;
          try {
            return fs.statSync(path.join(dir, p)).size >= liveSize * 0.9;
          } catch {
            return false;
          }
        },
        `the snapshot was ${moment}`,
      );
      await taking;
      // Only whole snapshots have a snapshot's name (one that finished just before the kill is whole).
      for (const name of snapshots(dir)) expect(summary(path.join(dir, name)), `${moment}: ${name}`).toEqual(before);
      expect(summary(dbPath), moment).toEqual(before);
      for (const name of snapshots(dir)) fs.rmSync(path.join(dir, name));
    }
    expect(partials(dir).length).toBeGreaterThan(0);

    // The next start removes the remains and snapshots work.
    const server = await startServer({ dbPath, signedIn: false });
    try {
      expect(partials(dir)).toEqual([]);
      const client = await logIn(server.anonymous(), 'admin', PASSWORD);
      expect((await client.get('/api/snapshots')).body.snapshots).toEqual([]);
      expect((await client.post('/api/snapshots')).status).toBe(201);
      expect(snapshots(dir)).toHaveLength(1);
    } finally {
      await server.stop();
    }
    const taken = summary(path.join(dir, snapshots(dir)[0]!));
    expect(taken).toEqual(before);
  });
});

describe('SIGKILL during a restore', () => {
  it('leaves the database either as it was or fully restored, whole; a later restore succeeds', { timeout: 120_000 }, async () => {
    const dbPath = tempDbPath();
    const dir = path.dirname(dbPath);
    await bigDatabase(dbPath, 'live');
    const old = summary(dbPath);
    const snapshot = path.join(dir, 'small-snapshot.db');
    const small = openDatabase(snapshot);
    small.prepare("INSERT INTO instances (vmid, name, state, stack, created_at, updated_at) VALUES (1, 'restored-1', 'deployed', 'development', 'x', 'x')").run();
    small.exec('PRAGMA journal_mode = DELETE');
    small.close();
    const restored = summary(snapshot);

    const restore = () =>
      spawn(process.execPath, ['dist/server/restore.js', snapshot], { cwd: root, env: { DB_PATH: dbPath }, stdio: ['ignore', 'pipe', 'pipe'] });
    const moments: Array<[string, () => boolean]> = [
      ['the snapshot copy exists', () => fs.existsSync(`${dbPath}.restoring`)],
      ['the current database is being kept aside', () => fs.existsSync(`${dbPath}.before-restore.partial`)],
      ['the kept copy is renamed', () => fs.existsSync(`${dbPath}.before-restore`)],
    ];
    for (const [moment, ready] of moments) {
      const child = restore();
      let err = '';
      child.stderr!.on('data', (chunk) => (err += chunk));
      const killed = await killWhen(child, ready, `${moment} (${err})`).then(
        () => true,
        () => false, // finished before that moment could be seen: restored, checked below
      );
      const now = summary(dbPath);
      if (!killed) {
        expect(now, moment).toEqual(restored);
        break;
      }
      expect([old, restored], moment).toContainEqual(now);
      console.log(`killed when ${moment}: database ${now.first === old.first ? "as it was" : "restored"}, integrity ${now.integrity}`);
      if (now.first !== old.first) break; // restored already: later moments cannot be reached again
      fs.rmSync(`${dbPath}.before-restore`, { force: true });
    }

    const finish = await execa(process.execPath, ['dist/server/restore.js', snapshot], { cwd: root, env: { DB_PATH: dbPath }, reject: false });
    expect(finish.exitCode, finish.stderr).toBe(0);
    expect(summary(dbPath)).toEqual(restored);
    expect(fs.existsSync(`${dbPath}.restoring`)).toBe(false);
    expect(fs.readdirSync(dir).filter((n) => n.includes('.partial'))).toEqual([]);
  });
});
