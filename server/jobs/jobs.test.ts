import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { json, startMockRemote, type MockRemote } from '../../test/helpers/remote.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { openDatabase } from '../db/database.js';
import type { AppOptions } from '../app.js';

const servers: TestServer[] = [];
const remotes: MockRemote[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
  for (const r of remotes.splice(0)) await r.close();
  removeTempDbs();
});

/** The real app on a database file, so the three jobs are seeded as in production. */
async function start(options: AppOptions = {}) {
  const server = await startServer({ dbPath: tempDbPath(), ...options });
  servers.push(server);
  return server;
}
async function remote(...args: Parameters<typeof startMockRemote>) {
  const r = await startMockRemote(...args);
  remotes.push(r);
  return r;
}
async function jobId(server: TestServer, key: string): Promise<number> {
  const res = await server.client.get('/api/jobs');
  return res.body.find((j: { key: string }) => j.key === key).id;
}
async function until(check: () => Promise<boolean> | boolean, ms = 5_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
/** A remote that never answers until released. */
function hanging() {
  const held: Array<() => void> = [];
  return {
    handler: (_req: unknown, res: import('node:http').ServerResponse) => {
      held.push(() => json(200, { devices: [] })(_req as never, res));
    },
    release: () => held.splice(0).forEach((f) => f()),
    get count() {
      return held.length;
    },
  };
}

describe('seeded jobs', () => {
  it('a file database starts with the three jobs, disabled, empty config, every 15 minutes', async () => {
    const server = await start();
    const res = await server.client.get('/api/jobs');
    expect(res.status).toBe(200);
    expect(res.body.map((j: { key: string }) => j.key)).toEqual(['tailscale_sync', 'patchmon_sync', 'semaphore_sync']);
    for (const job of res.body) {
      expect(job).toMatchObject({ enabled: 0, schedule: 15, config: {}, last_run_at: null, last_status: null, last_run_id: null, configured: false });
      expect(Object.keys(job).sort()).toEqual(
        ['id', 'key', 'name', 'description', 'enabled', 'schedule', 'config', 'configured', 'missing', 'last_run_at', 'last_status', 'last_run_id'].sort(),
      );
    }
  });

  it('an import with "jobs": [] or lacking some jobs leaves the three built-in jobs, restored or reseeded disabled', async () => {
    const server = await start();
    const doc = (await server.client.get('/api/export')).body;
    const patchmon = doc.jobs.find((j: { key: string }) => j.key === 'patchmon_sync');
    const restored = { ...patchmon, id: 7, enabled: 1, schedule: 30, config: { api_url: 'http://127.0.0.1:9/hosts', api_token: 'pm-token-1234' } };
    const imported = await server.client.post('/api/import', { ...doc, jobs: [restored], job_runs: [] });
    expect(imported.status).toBe(200);
    const jobs = (await server.client.get('/api/jobs')).body;
    expect(jobs.map((j: { key: string }) => j.key).sort()).toEqual(['patchmon_sync', 'semaphore_sync', 'tailscale_sync']);
    expect(jobs.find((j: { key: string }) => j.key === 'patchmon_sync')).toMatchObject({ id: 7, enabled: 1, schedule: 30, configured: true });
    for (const key of ['tailscale_sync', 'semaphore_sync']) {
      expect(jobs.find((j: { key: string }) => j.key === key), key).toMatchObject({ enabled: 0, schedule: 15, config: {}, configured: false });
    }

    expect((await server.client.post('/api/import', { ...doc, jobs: [] })).status).toBe(200);
    const reseeded = (await server.client.get('/api/jobs')).body;
    expect(reseeded.map((j: { key: string; enabled: number; config: object }) => [j.key, j.enabled, j.config])).toEqual([
      ['tailscale_sync', 0, {}],
      ['patchmon_sync', 0, {}],
      ['semaphore_sync', 0, {}],
    ]);
    const exported = (await server.client.get('/api/export')).body;
    expect(exported.jobs).toHaveLength(3);
  });

  it('an in-memory database has no jobs', async () => {
    const server = await startServer();
    servers.push(server);
    expect((await server.client.get('/api/jobs')).body).toEqual([]);
  });

  it('existing jobs are kept on the next start', async () => {
    const dbPath = tempDbPath();
    const first = await startServer({ dbPath });
    const id = await jobId(first, 'semaphore_sync');
    await first.client.put(`/api/jobs/${id}`, { schedule: 60, config: { api_url: 'http://127.0.0.1:9/inv' } });
    await first.stop();
    const second = await start({ dbPath });
    const jobs = (await second.client.get('/api/jobs')).body;
    expect(jobs).toHaveLength(3);
    expect(jobs.find((j: { id: number }) => j.id === id)).toMatchObject({ schedule: 60, config: { api_url: 'http://127.0.0.1:9/inv' } });
  });
});

describe('reading and changing a job', () => {
  it('answers 400 for a non-integer id and 404 for an unknown one', async () => {
    const server = await start();
    for (const call of [server.client.get('/api/jobs/abc'), server.client.put('/api/jobs/1.5', {}), server.client.post('/api/jobs/x/run')]) {
      const res = await call;
      expect([res.status, res.body]).toEqual([400, { error: 'invalid id' }]);
    }
    for (const call of [server.client.get('/api/jobs/999'), server.client.put('/api/jobs/999', {}), server.client.post('/api/jobs/999/run')]) {
      const res = await call;
      expect([res.status, res.body]).toEqual([404, { error: 'job not found' }]);
    }
  });

  it('merges config, keeps omitted fields, and returns secrets only as **REDACTED**', async () => {
    const server = await start();
    const id = await jobId(server, 'tailscale_sync');
    const put = await server.client.put(`/api/jobs/${id}`, { enabled: true, schedule: 30, config: { api_key: 'tskey-secret-1', tailnet: 'home' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, enabled: 1, schedule: 30, config: { api_key: '**REDACTED**', tailnet: 'home' } });

    const again = await server.client.put(`/api/jobs/${id}`, { config: { run_on_create: true } });
    expect(again.body).toMatchObject({ enabled: 1, schedule: 30, config: { api_key: '**REDACTED**', tailnet: 'home', run_on_create: true } });
    for (const res of [await server.client.get('/api/jobs'), await server.client.get(`/api/jobs/${id}`)]) {
      expect(res.text).not.toContain('tskey-secret-1');
      expect(res.text).toContain('**REDACTED**');
    }
  });

  it('sending **REDACTED** back keeps the stored secret; a new value replaces it; null removes a field', async () => {
    const server = await start();
    const id = await jobId(server, 'patchmon_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_url: 'http://127.0.0.1:1/hosts', api_token: 'key:first' } });
    const shown = (await server.client.get(`/api/jobs/${id}`)).body.config;
    await server.client.put(`/api/jobs/${id}`, { config: shown });
    let exported = (await server.client.get('/api/export')).body.jobs.find((j: { id: number }) => j.id === id);
    expect(exported.config).toEqual({ api_url: 'http://127.0.0.1:1/hosts', api_token: 'key:first' });

    await server.client.put(`/api/jobs/${id}`, { config: { api_token: 'key:second' } });
    exported = (await server.client.get('/api/export')).body.jobs.find((j: { id: number }) => j.id === id);
    expect(exported.config.api_token).toBe('key:second');

    await server.client.put(`/api/jobs/${id}`, { config: { api_token: null } });
    const res = await server.client.get(`/api/jobs/${id}`);
    expect(res.body.config).toEqual({ api_url: 'http://127.0.0.1:1/hosts' });
  });

  it('rejects a bad schedule, enabled, unknown config field or bad URL with 400 and leaves the job as it was', async () => {
    const server = await start();
    const id = await jobId(server, 'semaphore_sync');
    const cases: Array<[unknown, string]> = [
      [{ schedule: 0 }, 'schedule'],
      [{ schedule: 10081 }, 'schedule'],
      [{ schedule: 1.5 }, 'schedule'],
      [{ enabled: 'yes' }, 'enabled'],
      [{ config: 'x' }, 'config'],
      [{ config: { api_key: 'not a semaphore field' } }, 'config'],
      [{ config: { api_url: 'ftp://example.invalid/' } }, 'config.api_url'],
      [{ config: { api_url: 'http://user:pass@127.0.0.1/' } }, 'config.api_url'],
      [{ config: { run_on_create: 'true' } }, 'config.run_on_create'],
      [[1, 2], 'body'],
    ];
    for (const [body, field] of cases) {
      const res = await server.client.put(`/api/jobs/${id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field), JSON.stringify(body)).toContain(field);
    }
    const unknown = await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'x', foo: 1 } });
    expect(unknown.body).toEqual({ errors: [{ field: 'config', message: 'unknown fields api_key, foo' }] });
    expect((await server.client.get(`/api/jobs/${id}`)).body).toMatchObject({ enabled: 0, schedule: 15, config: {} });
    expect((await server.client.put(`/api/jobs/${id}`, { schedule: 10080, ignored: true })).body.schedule).toBe(10080);
  });
});

describe('runs', () => {
  it('a run with missing config fails at once, is recorded, and answers 500 with the reason', async () => {
    const server = await start();
    const id = await jobId(server, 'patchmon_sync');
    const res = await server.client.post(`/api/jobs/${id}/run`);
    expect([res.status, res.body]).toEqual([500, { error: 'patchmon_sync is not configured: set api_url and api_token' }]);
    const job = (await server.client.get(`/api/jobs/${id}`)).body;
    expect(job.runs).toEqual([
      {
        id: job.last_run_id,
        job_id: id,
        started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        ended_at: expect.stringMatching(/Z$/),
        status: 'error',
        result: 'patchmon_sync is not configured: set api_url and api_token',
      },
    ]);
    expect(job.last_status).toBe('error');
  });

  it('keeps the newest 10 runs per job after 12 runs, newest first', async () => {
    const server = await start();
    const id = await jobId(server, 'semaphore_sync');
    for (let i = 0; i < 12; i++) await server.client.post(`/api/jobs/${id}/run`);
    const job = (await server.client.get(`/api/jobs/${id}`)).body;
    expect(job.runs).toHaveLength(10);
    const ids = job.runs.map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(ids[0]).toBe(job.last_run_id);
    const db = server.db.prepare('SELECT count(*) AS n, min(id) AS oldest FROM job_runs WHERE job_id = ?').get(id) as { n: number; oldest: number };
    expect(db).toEqual({ n: 10, oldest: ids.at(-1) });
  });

  it('never runs a job twice at once: run-now answers 409 while it runs', async () => {
    const hold = hanging();
    const mock = await remote(hold.handler);
    const server = await start();
    const id = await jobId(server, 'tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'k', api_url: mock.url } });
    const first = server.client.post(`/api/jobs/${id}/run`);
    await until(() => hold.count === 1);
    const second = await server.client.post(`/api/jobs/${id}/run`);
    expect([second.status, second.body]).toEqual([409, { error: 'job already running' }]);
    hold.release();
    expect((await first).status).toBe(200);
    const job = (await server.client.get(`/api/jobs/${id}`)).body;
    expect(job.runs).toHaveLength(1);
    expect(mock.requests).toHaveLength(1);
  });

  it('runs an enabled job on its schedule, and a scheduled tick skips a job that is still running', async () => {
    const hold = hanging();
    const mock = await remote(hold.handler);
    // A schedule minute of 40 ms: schedule 1 ticks every 40 ms.
    const server = await start({ jobs: { minuteMs: 40 } });
    const id = await jobId(server, 'tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'k', api_url: mock.url } });
    await new Promise((r) => setTimeout(r, 200));
    expect(mock.requests).toHaveLength(0); // disabled: never scheduled

    await server.client.put(`/api/jobs/${id}`, { enabled: true, schedule: 1 });
    await until(() => hold.count === 1);
    await new Promise((r) => setTimeout(r, 300)); // several ticks while the first run hangs
    expect(mock.requests).toHaveLength(1);
    expect((await server.client.get(`/api/jobs/${id}`)).body.runs.map((r: { status: string }) => r.status)).toEqual(['running']);
    hold.release();
    await until(() => hold.count === 1); // the next tick runs again
    hold.release();
    await server.client.put(`/api/jobs/${id}`, { enabled: false });
    await until(async () => (await server.client.get(`/api/jobs/${id}`)).body.runs.every((r: { status: string }) => r.status !== 'running'));
    const runs = (await server.client.get(`/api/jobs/${id}`)).body.runs;
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.every((r: { status: string; result: string }) => r.status === 'success' && r.result === 'Updated 0 of 0 instances')).toBe(true);
  });

  it('run_on_create runs after the 201 is sent, without delaying it', async () => {
    const hold = hanging();
    const mock = await remote(hold.handler);
    const server = await start();
    const id = await jobId(server, 'tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'k', api_url: mock.url, run_on_create: true } });
    const other = await jobId(server, 'patchmon_sync');
    // patchmon has no run_on_create: it must not run.
    await server.client.put(`/api/jobs/${other}`, { config: { api_url: mock.url, api_token: 't' } });

    const created = await server.client.post('/api/instances', buildInstance({ name: 'fresh' }));
    expect(created.status).toBe(201);
    await until(() => hold.count === 1); // the job is waiting on the remote while the 201 is already here
    expect((await server.client.get(`/api/jobs/${id}`)).body.runs[0].status).toBe('running');
    hold.release();
    await until(async () => (await server.client.get(`/api/jobs/${id}`)).body.last_status === 'success');
    expect((await server.client.get(`/api/jobs/${other}`)).body.runs).toEqual([]);
    expect(mock.requests.map((r) => r.path)).toEqual(['/api/v2/tailnet/-/devices']);
  });
});

describe('start-up and shutdown', () => {
  it('closes runs a crash left running as "interrupted by restart" and prunes to 10', async () => {
    const dbPath = tempDbPath();
    await (await startServer({ dbPath })).stop();
    const db = openDatabase(dbPath);
    const insert = db.prepare("INSERT INTO job_runs (job_id, started_at, ended_at, status, result) VALUES (1, ?, ?, ?, '')");
    for (let i = 0; i < 11; i++) insert.run(`2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`, '2026-01-01T00:01:00.000Z', 'success');
    insert.run('2026-01-01T00:02:00.000Z', null, 'running');
    db.close();

    const server = await start({ dbPath });
    const job = (await server.client.get('/api/jobs/1')).body;
    expect(job.runs).toHaveLength(10);
    expect(job.runs[0]).toMatchObject({ status: 'error', result: 'interrupted by restart', ended_at: expect.any(String) });
    expect(server.db.prepare('SELECT count(*) AS n FROM job_runs').get()).toEqual({ n: 10 });
  });

  it('close() stops the scheduler and waits for a run in flight, which is recorded', async () => {
    const hold = hanging();
    const mock = await remote(hold.handler);
    const dbPath = tempDbPath();
    const server = await startServer({ dbPath });
    const id = await jobId(server, 'tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'k', api_url: mock.url } });
    const run = server.client.post(`/api/jobs/${id}/run`).catch(() => undefined);
    await until(() => hold.count === 1);
    const started = Date.now();
    await server.jobs.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    await server.stop();
    await run;
    const db = openDatabase(dbPath);
    expect(db.prepare('SELECT status, result FROM job_runs').all()).toEqual([
      { status: 'error', result: 'Tailscale request cancelled: the server is shutting down' },
    ]);
    db.close();
  });
});

describe('secrets', () => {
  it('never appear in logs, run results or error texts', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const mock = await remote(json(401, { message: 'bad key' }));
    const server = await start({ logger: pino({ level: 'debug' }, sink) });
    const ids = { t: await jobId(server, 'tailscale_sync'), p: await jobId(server, 'patchmon_sync'), s: await jobId(server, 'semaphore_sync') };
    await server.client.put(`/api/jobs/${ids.t}`, { config: { api_key: 'SECRET-TS', api_url: mock.url } });
    await server.client.put(`/api/jobs/${ids.p}`, { config: { api_token: 'SECRET-PM:x', api_url: mock.url } });
    await server.client.put(`/api/jobs/${ids.s}`, { config: { api_token: 'SECRET-SEM', api_url: mock.url } });
    const texts: string[] = [];
    for (const id of Object.values(ids)) {
      const res = await server.client.post(`/api/jobs/${id}/run`);
      expect(res.status).toBe(500);
      texts.push(res.text, (await server.client.get(`/api/jobs/${id}`)).text);
    }
    texts.push((await server.client.get('/api/jobs')).text, ...lines);
    expect(lines.some((l) => l.includes('job run failed'))).toBe(true);
    for (const text of texts) expect(text).not.toMatch(/SECRET|U0VDUkVU/);
  });

  it.each([
    ['tailscale_sync', 'api_key'],
    ['patchmon_sync', 'api_token'],
    ['semaphore_sync', 'api_token'],
  ])('%s: a %s with a control character is refused when saved (400), the stored one kept', async (key, field) => {
    const server = await start();
    const id = await jobId(server, key);
    expect((await server.client.put(`/api/jobs/${id}`, { config: { [field]: 'good-secret' } })).status).toBe(200);
    for (const bad of ['line\nbreak-secret', 'tab\tsecret', 'nul\u0000secret', 'del\u007fsecret', 'c1\u0085secret']) {
      const res = await server.client.put(`/api/jobs/${id}`, { config: { [field]: bad } });
      expect([res.status, res.body], JSON.stringify(bad)).toEqual([
        400,
        { errors: [{ field: `config.${field}`, message: 'must not contain control characters (line breaks, tabs)' }] },
      ]);
    }
    const stored = server.db.prepare<[number], { config: string }>('SELECT config FROM jobs WHERE id = ?').get(id)!;
    expect(JSON.parse(stored.config)[field]).toBe('good-secret');
  });

  it('a stored secret that breaks the request (newline, from an older version or an import) is scrubbed from the run, the log and the 500', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const mock = await remote(json(200, { hosts: [] }));
    const server = await start({ logger: pino({ level: 'debug' }, sink) });
    const texts: string[] = [];
    for (const [key, config] of [
      ['tailscale_sync', { api_key: 'tskey-LEAKED\nPART2-tskey', api_url: mock.url }],
      ['patchmon_sync', { api_token: 'pm-LEAKED\nPART2-pm', api_url: `${mock.url}/hosts` }],
      ['semaphore_sync', { api_token: ' sem-LEAKED\r\nPART2-sem ', api_url: `${mock.url}/inv` }],
    ] as const) {
      const id = await jobId(server, key);
      server.db.prepare('UPDATE jobs SET config = ? WHERE id = ?').run(JSON.stringify(config), id);
      const res = await server.client.post(`/api/jobs/${id}/run`);
      expect(res.status).toBe(500);
      expect(res.body.error).toMatch(/^could not reach (Tailscale|PatchMon|Semaphore) at http:\/\/127\.0\.0\.1:\d+: /);
      texts.push(res.text, (await server.client.get(`/api/jobs/${id}`)).text);
    }
    texts.push(...lines);
    expect(lines.some((l) => l.includes('job run failed'))).toBe(true);
    for (const text of texts) expect(text).not.toMatch(/LEAKED|PART2/);
    expect(mock.requests).toEqual([]);
  });

  it('an error text that quotes the secret (here a remote echoing it back) is stored and sent with the secret redacted', async () => {
    const mock = await remote(json(200, { type: 'echo SEM-ECHOED-TOKEN', inventory: '' }));
    const server = await start();
    const id = await jobId(server, 'semaphore_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_token: 'SEM-ECHOED-TOKEN', api_url: `${mock.url}/inv` } });
    const res = await server.client.post(`/api/jobs/${id}/run`);
    const expected = 'Semaphore inventory type "echo **REDACTED**" is not supported (expected static or static-yaml)';
    expect([res.status, res.body]).toEqual([500, { error: expected }]);
    expect((await server.client.get(`/api/jobs/${id}`)).body.runs[0]).toMatchObject({ status: 'error', result: expected });
  });
});
