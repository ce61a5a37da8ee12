import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { SNAPSHOT_NAME } from './snapshots.js';
import { openRetained } from '../db/database.js';

let servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  removeTempDbs();
});

async function serverOnFile(config: Record<string, unknown> = {}, snapshots = {}) {
  const dbPath = tempDbPath();
  const server = await startServer({ dbPath, config, snapshots });
  servers.push(server);
  return { server, dbPath, dir: path.join(path.dirname(dbPath), 'snapshots') };
}

const files = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);
const names = (dir: string) => files(dir).filter((n) => SNAPSHOT_NAME.test(n));

async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('snapshots', () => {
  it('an in-memory database has none, and says so', async () => {
    const server = await startServer();
    servers.push(server);
    expect((await server.client.get('/api/snapshots')).body).toMatchObject({ enabled: false, reason: 'the database is in memory', snapshots: [] });
    const res = await server.client.post('/api/snapshots');
    expect([res.status, res.body]).toEqual([409, { error: 'snapshots are off: the database is in memory' }]);
  });

  it('takes one now into snapshots/ beside the database: a whole, checked copy of every table, downloadable', async () => {
    const { server, dir, dbPath } = await serverOnFile();
    await server.client.post('/api/instances', buildInstance({ vmid: 42, name: 'answer' }));
    const res = await server.client.post('/api/snapshots');
    expect(res.status).toBe(201);
    const { snapshot } = res.body;
    expect(snapshot).toEqual({ name: expect.stringMatching(SNAPSHOT_NAME), kind: 'manual', taken_at: expect.stringMatching(/Z$/), size: expect.any(Number) });
    expect(snapshot.name).toMatch(/^homefleet-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z-manual\.db$/);
    expect(path.dirname(dbPath)).toBe(path.dirname(dir));
    expect(names(dir)).toEqual([snapshot.name]);
    // It holds password hashes and job secrets: readable by the server's user only.
    expect((fs.statSync(path.join(dir, snapshot.name)).mode & 0o777).toString(8)).toBe('600');
    const list = (await server.client.get('/api/snapshots')).body;
    expect(list).toMatchObject({ enabled: true, directory: dir, interval_hours: 24, keep: { scheduled: 7, manual: 7, 'pre-import': 3 }, snapshots: [snapshot] });

    const download = await fetch(`${server.baseUrl}/api/snapshots/${snapshot.name}`, { headers: { cookie: server.client.cookieHeader() } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename=${snapshot.name}`);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.equals(fs.readFileSync(path.join(dir, snapshot.name)))).toBe(true);
    const copyPath = path.join(path.dirname(dbPath), 'downloaded.db');
    fs.writeFileSync(copyPath, bytes);
    const copy = openRetained(copyPath, { readonly: true });
    expect(copy.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    expect(copy.prepare('PRAGMA journal_mode').pluck().get()).toBe('delete');
    expect(copy.prepare('SELECT name FROM instances').pluck().all()).toEqual(['answer']);
    expect(copy.prepare('SELECT username FROM accounts').pluck().all()).toContain('admin');
    copy.close();
  });

  it('"take one now" asked many times at once queues one copy, not one per request', { timeout: 60_000 }, async () => {
    const { server, dir } = await serverOnFile();
    const answers = await Promise.all(Array.from({ length: 6 }, () => server.client.post('/api/snapshots')));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    // The first may already be copying when the others arrive; they share the next one.
    const taken = new Set(answers.map((a) => a.body.snapshot.name));
    expect(taken.size).toBeLessThanOrEqual(2);
    expect(names(dir).sort()).toEqual([...taken].sort());
  });

  it('downloads only a snapshot by its exact name: no paths, no other files', async () => {
    const { server, dir } = await serverOnFile();
    const { name } = (await server.client.post('/api/snapshots')).body.snapshot;
    fs.writeFileSync(path.join(dir, 'notes.db'), 'x');
    for (const bad of [
      '..%2Fhomefleet.db', '..%2F..%2Fetc%2Fpasswd', '%2E%2E%2Fhomefleet.db', 'notes.db', `.${name}.partial`, `${name}%00`, `${name}.bak`,
      'homefleet-2026-11-23T10-15-00Z-manual.db', encodeURIComponent(`../snapshots/${name}`), `..%5C${name}`,
    ]) {
      const res = await server.client.get(`/api/snapshots/${bad}`);
      expect(res.status, bad).toBe(404);
    }
    expect((await server.client.get(`/api/snapshots/${name}`)).status).toBe(200);
  });

  it('keeps the last N of each kind; two in one second get distinct names', { timeout: 60_000 }, async () => {
    const { server, dir } = await serverOnFile({ snapshotKeep: 2 });
    const taken = [];
    for (let i = 0; i < 4; i++) taken.push((await server.client.post('/api/snapshots')).body.snapshot.name);
    expect(new Set(taken).size).toBe(4);
    expect(names(dir)).toHaveLength(2);
    const kept = (await server.client.get('/api/snapshots')).body.snapshots.map((s: { name: string }) => s.name);
    expect(kept).toHaveLength(2);
    expect(taken.slice(2).every((n) => kept.includes(n))).toBe(true);
  });

  it('takes a pre-import snapshot holding what the import replaced; keeps the last 3', async () => {
    const { server, dir } = await serverOnFile();
    await server.client.post('/api/instances', buildInstance({ vmid: 1, name: 'before-import' }));
    // A bad file, or a body that is not JSON, leaves no pre-import snapshot (the copy started with the request is dropped).
    expect((await server.client.post('/api/import', { instances: [{ vmid: 0 }] })).status).toBe(400);
    expect((await server.client.post('/api/import', '{"instances": [')).status).toBe(400);
    const manual = (await server.client.post('/api/snapshots')).body.snapshot.name; // queued behind both
    expect(names(dir)).toEqual([manual]);
    expect(files(dir)).toEqual([manual]);
    fs.rmSync(path.join(dir, manual));
    expect((await server.client.post('/api/import', { instances: [{ vmid: 2, name: 'imported', state: 'deployed', stack: 'development' }] })).status).toBe(200);
    const first = await until(() => names(dir), (n) => n.length === 1);
    expect(first).toEqual([expect.stringMatching(/-pre-import\.db$/)]);
    const copy = openRetained(path.join(dir, first[0]!), { readonly: true });
    expect(copy.prepare('SELECT name FROM instances').pluck().all()).toEqual(['before-import']);
    copy.close();
    for (let i = 0; i < 3; i++) await server.client.post('/api/import', { instances: [] });
    await server.client.post('/api/snapshots'); // queued behind the pre-import ones, so they are all named by now
    const all = (await server.client.get('/api/snapshots')).body.snapshots;
    expect(all.filter((s: { kind: string }) => s.kind === 'pre-import')).toHaveLength(3);
    expect(all.map((s: { name: string }) => s.name)).not.toContain(first[0]);
  });

  it('parallel imports take turns: each pre-import snapshot holds what that import replaced', { timeout: 30_000 }, async () => {
    const { server, dir } = await serverOnFile();
    await server.client.post('/api/instances', buildInstance({ vmid: 1, name: 'original' }));
    const body = (name: string) => JSON.stringify({ instances: [{ vmid: 1, name, state: 'deployed', stack: 'development' }] });
    // The first import's body arrives slowly: half now, the rest later.
    const a = body('from-a');
    const slow = http.request(`${server.baseUrl}/api/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(a), origin: server.baseUrl, cookie: server.client.cookieHeader() },
    });
    const first = new Promise<number>((resolve, reject) => {
      slow.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      slow.on('error', reject);
    });
    slow.write(a.slice(0, 10));
    await new Promise((r) => setTimeout(r, 100));
    let secondDone = false;
    const second = server.client.post('/api/import', body('from-b')).then((res) => ((secondDone = true), res.status));
    await new Promise((r) => setTimeout(r, 300));
    expect(secondDone).toBe(false); // waits for its turn
    slow.end(a.slice(10));
    expect([await first, await second]).toEqual([200, 200]);
    await server.client.post('/api/snapshots'); // queued behind the pre-import ones
    const held = names(dir)
      .filter((n) => n.includes('pre-import'))
      .map((n) => {
        const copy = openRetained(path.join(dir, n), { readonly: true });
        const name = copy.prepare('SELECT name FROM instances').pluck().get();
        copy.close();
        return name;
      })
      .sort();
    expect(held).toEqual(['from-a', 'original']);
    expect((await server.client.get('/api/instances/1')).body.name).toBe('from-b');
  });

  it('takes scheduled snapshots, and none when switched off', { timeout: 45_000 }, async () => {
    const on = await serverOnFile({ snapshotIntervalHours: 24 }, { firstDelayMs: 10 });
    // Nobody waits for a scheduled one, so its helper runs at nice 19: on a machine busy with the rest
    // of the suite it gets a core only now and then.
    const scheduled = await until(() => names(on.dir), (n) => n.length === 1, 30_000);
    expect(scheduled).toEqual([expect.stringMatching(/-scheduled\.db$/)]);
    const off = await serverOnFile({ snapshotIntervalHours: 0 }, { firstDelayMs: 10 });
    await new Promise((r) => setTimeout(r, 300));
    expect(names(off.dir)).toEqual([]);
  });

  it('without a helper process that can run, takes snapshots on the server itself', async () => {
    const { server, dir } = await serverOnFile({}, { helperCommand: path.join(os.tmpdir(), 'no-such-node-binary') });
    await server.client.post('/api/instances', buildInstance({ vmid: 3, name: 'here' }));
    const res = await server.client.post('/api/snapshots');
    expect(res.status).toBe(201);
    expect(files(dir)).toEqual([res.body.snapshot.name]);
    const copy = openRetained(path.join(dir, res.body.snapshot.name), { readonly: true });
    expect(copy.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    expect(copy.prepare('SELECT name FROM instances').pluck().all()).toEqual(['here']);
    copy.close();
    expect((await server.client.post('/api/import', { instances: [] })).status).toBe(200);
    expect(await until(() => names(dir).length, (n) => n === 2)).toBe(2);
  });

  it('removes what an interrupted snapshot left at start; a .partial file is never listed', async () => {
    const dbPath = tempDbPath();
    const dir = path.join(path.dirname(dbPath), 'snapshots');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, '.homefleet-2026-11-23T10-15-00Z-manual.db.partial'), 'half');
    fs.writeFileSync(path.join(dir, '.homefleet-2026-11-23T10-15-00Z-manual.db.partial-journal'), 'half');
    const server = await startServer({ dbPath });
    servers.push(server);
    expect(names(dir)).toEqual([]);
    expect((await server.client.get('/api/snapshots')).body.snapshots).toEqual([]);
  });
});
