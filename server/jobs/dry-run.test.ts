import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { json, startMockRemote, type MockRemote } from '../../test/helpers/remote.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';

let server: TestServer;
let mock: MockRemote;
beforeEach(async () => {
  mock = await startMockRemote();
  server = await startServer({ dbPath: tempDbPath(), jobs: { httpTimeoutMs: 300 } });
});
afterEach(async () => {
  await server.stop();
  await mock.close();
  removeTempDbs();
});

async function jobId(key: string): Promise<number> {
  return (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === key).id;
}
async function create(name: string, fields: Record<string, unknown> = {}) {
  const body = buildInstance({ name, ...fields });
  expect((await server.client.post('/api/instances', body)).status).toBe(201);
  return body.vmid as number;
}
type AuditRow = { action: string; target: string | null; detail: Record<string, unknown> };
const audit = async (): Promise<AuditRow[]> => (await server.client.get('/api/audit')).body;
/** Everything a run could write: instances, every instance's history, the job and its runs. */
async function state() {
  const instances = (await server.client.get('/api/instances')).body as { vmid: number }[];
  const histories = await Promise.all(instances.map(async (i) => (await server.client.get(`/api/instances/${i.vmid}/history`)).body));
  const jobs = await Promise.all(((await server.client.get('/api/jobs')).body as { id: number }[]).map(async (j) => (await server.client.get(`/api/jobs/${j.id}`)).body));
  return { instances, histories, jobs };
}

describe('POST /api/jobs/:id/run?dry_run=true', () => {
  const devices = {
    devices: [
      { hostname: 'web01', name: 'web01.tail.ts.net', addresses: ['100.64.0.1'] },
      { hostname: 'db', name: 'db.tail.ts.net', addresses: ['100.64.0.2'] },
    ],
  };

  it('answers every field a run would change, old and new, and writes nothing: no run, no history, no instance change', async () => {
    mock.handle(json(200, devices));
    const web = await create('web01');
    await create('db', { tailscale: 1, tailscale_ip: '100.64.0.2' }); // already as the tailnet says: not listed
    const gone = await create('gone', { tailscale: 1, tailscale_ip: '100.64.0.77' });
    const id = await jobId('tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'tskey-dry', api_url: mock.url } });
    const before = await state();
    const events: string[] = [];
    server.context.bus.on('job.run.started', () => events.push('started'));
    server.context.bus.on('instance.updated', () => events.push('updated'));

    const res = await server.client.post(`/api/jobs/${id}/run?dry_run=true`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      summary: 'Would update 2 of 3 instances',
      changes: [
        { vmid: gone, name: 'gone', field: 'tailscale', old: 1, new: 0 },
        { vmid: gone, name: 'gone', field: 'tailscale_ip', old: '100.64.0.77', new: '' },
        { vmid: web, name: 'web01', field: 'tailscale', old: 0, new: 1 },
        { vmid: web, name: 'web01', field: 'tailscale_ip', old: '', new: '100.64.0.1' },
      ],
    });
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer tskey-dry');
    expect(await state()).toEqual(before);
    expect(events).toEqual([]);

    // The preview then matches what the run does.
    const run = await server.client.post(`/api/jobs/${id}/run`);
    expect(run.body).toEqual({ summary: 'Updated 2 of 3 instances' });
  });

  it('is audited as a preview of the named job, never with the secret', async () => {
    mock.handle(json(200, devices));
    await create('web01');
    const id = await jobId('tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'tskey-secret-value', api_url: mock.url } });
    expect((await server.client.post(`/api/jobs/${id}/run?dry_run=true`)).status).toBe(200);
    const [entry] = await audit();
    expect(entry).toMatchObject({ action: 'request', target: `job ${id}`, detail: { method: 'POST', status: 200, name: 'Tailscale sync', dry_run: true } });
    expect(JSON.stringify(await audit())).not.toContain('tskey-secret-value');
  });

  it('a remote failure is a 500 naming it, with the secret scrubbed, and still writes no run', async () => {
    mock.handle(json(503, { message: 'down' }));
    await create('web01', { tailscale: 1, tailscale_ip: '100.64.0.1' });
    const id = await jobId('patchmon_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_url: `${mock.url}/hosts`, api_token: 'pm:secret' } });
    const before = await state();
    const res = await server.client.post(`/api/jobs/${id}/run?dry_run=true`);
    expect([res.status, res.body]).toEqual([500, { error: 'PatchMon answered HTTP 503 Service Unavailable' }]);
    expect(await state()).toEqual(before);
  });

  it('a job that is not configured says what to set, contacting nothing', async () => {
    const id = await jobId('semaphore_sync');
    const res = await server.client.post(`/api/jobs/${id}/run?dry_run=true`);
    expect([res.status, res.body]).toEqual([500, { error: 'semaphore_sync is not configured: set api_url and api_token' }]);
    expect((await server.client.get(`/api/jobs/${id}`)).body.runs).toEqual([]);
    expect(mock.requests).toEqual([]);
  });

  it('nothing to change: an empty list', async () => {
    mock.handle(json(200, devices));
    await create('web01', { tailscale: 1, tailscale_ip: '100.64.0.1' });
    const id = await jobId('tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'k', api_url: mock.url } });
    expect((await server.client.post(`/api/jobs/${id}/run?dry_run=true`)).body).toEqual({ summary: 'Would update 0 of 1 instances', changes: [] });
  });

  it('refuses a dry_run that is not true or false (400), an unknown job (404), and a viewer (403)', async () => {
    const id = await jobId('tailscale_sync');
    const bad = await server.client.post(`/api/jobs/${id}/run?dry_run=yes`);
    expect([bad.status, bad.body]).toEqual([400, { errors: [{ field: 'dry_run', message: 'must be true or false' }] }]);
    expect((await server.client.post('/api/jobs/999/run?dry_run=true')).body).toEqual({ error: 'job not found' });
    const viewer = await server.signIn('viewer');
    expect((await viewer.post(`/api/jobs/${id}/run?dry_run=true`)).status).toBe(403);
    expect(mock.requests).toEqual([]);
  });

  it('runs beside a real run of the same job without a 409 and without writing', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    mock.handle((req, res) => void held.then(() => json(200, devices)(req, res)));
    await create('web01');
    const id = await jobId('tailscale_sync');
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'k', api_url: mock.url } });
    const run = server.client.post(`/api/jobs/${id}/run`);
    const previews = [1, 2, 3].map(() => server.client.post(`/api/jobs/${id}/run?dry_run=true`));
    await expect.poll(() => mock.requests.length, { timeout: 3_000 }).toBe(4);
    release();
    for (const preview of await Promise.all(previews)) expect(preview.body.summary).toBe('Would update 1 of 1 instances');
    expect((await run).body).toEqual({ summary: 'Updated 1 of 1 instances' });
    expect((await server.client.get(`/api/jobs/${id}`)).body.runs).toHaveLength(1);
  });
});

describe('PUT /api/jobs/:id audit', () => {
  it('names only the fields whose value changed, and the job by name', async () => {
    const id = await jobId('patchmon_sync');
    // run_on_create false where none was stored acts the same: not a change.
    const first = { enabled: false, schedule: 15, config: { api_url: 'http://127.0.0.1:9/hosts', api_token: 'a:b', run_on_create: false } };
    expect((await server.client.put(`/api/jobs/${id}`, first)).status).toBe(200);
    expect((await audit())[0]!.detail).toMatchObject({ name: 'PatchMon sync', fields: ['config.api_url', 'config.api_token'] });

    // The dashboard's form sends every field again; only the schedule moved. The stored secret comes back redacted.
    const again = { enabled: false, schedule: 30, config: { api_url: 'http://127.0.0.1:9/hosts', api_token: '**REDACTED**', run_on_create: false } };
    expect((await server.client.put(`/api/jobs/${id}`, again)).status).toBe(200);
    expect((await audit())[0]!.detail).toMatchObject({ method: 'PUT', fields: ['schedule'] });

    expect((await server.client.put(`/api/jobs/${id}`, again)).status).toBe(200);
    expect((await audit())[0]!.detail).toMatchObject({ fields: [] });

    expect((await server.client.put(`/api/jobs/${id}`, { enabled: true, config: { api_token: 'c:d', api_url: null, run_on_create: true } })).status).toBe(200);
    expect((await audit())[0]!.detail.fields).toEqual(['enabled', 'config.api_url', 'config.api_token', 'config.run_on_create']);
    // What the dashboard's form sends for an empty text box ("" means not set) is not a change from none.
    const semaphore = await jobId('semaphore_sync');
    expect((await server.client.put(`/api/jobs/${semaphore}`, { enabled: false, schedule: 15, config: { api_url: '', run_on_create: false } })).status).toBe(200);
    expect((await audit())[0]!.detail.fields).toEqual([]);
  });
});
