import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInstance } from '../../../test/helpers/factories.js';
import { json, startMockRemote, type MockRemote } from '../../../test/helpers/remote.js';
import { startServer, type TestServer } from '../../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../../test/helpers/tempdb.js';

let server: TestServer;
let mock: MockRemote;
beforeEach(async () => {
  mock = await startMockRemote();
  // A 300 ms remote timeout so the timeout case is quick; the rule is 30 s.
  server = await startServer({ dbPath: tempDbPath(), jobs: { httpTimeoutMs: 300 } });
});
afterEach(async () => {
  await server.stop();
  await mock.close();
  removeTempDbs();
});

async function configure(key: string, config: Record<string, unknown>): Promise<number> {
  const id = (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === key).id;
  const res = await server.client.put(`/api/jobs/${id}`, { config });
  expect(res.status, res.text).toBe(200);
  return id;
}
async function create(name: string, fields: Record<string, unknown> = {}) {
  const body = buildInstance({ name, ...fields });
  expect((await server.client.post('/api/instances', body)).status).toBe(201);
  return body.vmid as number;
}
const instance = async (vmid: number) => (await server.client.get(`/api/instances/${vmid}`)).body;
const history = async (vmid: number) => (await server.client.get(`/api/instances/${vmid}/history`)).body;
const lastRun = async (id: number) => (await server.client.get(`/api/jobs/${id}`)).body.runs[0];

/** Instances as they are, for "nothing changed" checks. */
const snapshot = async () => (await server.client.get('/api/instances')).body;

describe('tailscale_sync', () => {
  const devices = {
    devices: [
      { hostname: 'web01', name: 'web01.tail1234.ts.net', addresses: ['100.64.0.1', 'fd7a:115c:a1e0::1'], lastSeen: '2026-11-22T09:00:00Z' },
      { hostname: 'localhost', name: 'DB.tail1234.ts.net', addresses: ['fd7a:115c:a1e0::2', '100.64.0.2'], lastSeen: '2026-11-22T09:00:00Z' },
      { hostname: 'laptop', name: 'laptop.tail1234.ts.net', addresses: ['100.64.0.9'], lastSeen: '2026-11-22T09:00:00Z' },
    ],
  };

  it('sends the key as Bearer, sets flag and IPv4 on matches, clears the rest, records history and the run', async () => {
    mock.handle(json(200, devices));
    const web = await create('WEB01');
    const db = await create('db', { tailscale: 1, tailscale_ip: '100.64.0.50' });
    const gone = await create('gone', { tailscale: 1, tailscale_ip: '100.64.0.77' });
    const idle = await create('idle');
    const id = await configure('tailscale_sync', { api_key: 'tskey-api-abc', tailnet: 'example.com', api_url: mock.url });

    const res = await server.client.post(`/api/jobs/${id}/run`);
    expect([res.status, res.body]).toEqual([200, { summary: 'Updated 3 of 4 instances' }]);
    expect(mock.requests).toEqual([
      expect.objectContaining({ method: 'GET', path: '/api/v2/tailnet/example.com/devices', headers: expect.objectContaining({ authorization: 'Bearer tskey-api-abc' }) }),
    ]);
    expect(await instance(web)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.1' });
    expect(await instance(db)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.2' });
    expect(await instance(gone)).toMatchObject({ tailscale: 0, tailscale_ip: '' });
    expect(await instance(idle)).toMatchObject({ tailscale: 0, tailscale_ip: '' });

    const webHistory = await history(web);
    // Newest first: both fields changed in one update, so the later-written entry leads.
    expect(webHistory.filter((h: { field: string }) => h.field !== 'created')).toEqual([
      expect.objectContaining({ vmid: web, field: 'tailscale', old_value: '0', new_value: '1', changed_by: 'job:tailscale_sync' }),
      expect.objectContaining({ vmid: web, field: 'tailscale_ip', old_value: '', new_value: '100.64.0.1', changed_by: 'job:tailscale_sync' }),
    ]);
    expect((await history(idle)).map((h: { field: string }) => h.field)).toEqual(['created']);
    expect(await lastRun(id)).toMatchObject({ status: 'success', result: 'Updated 3 of 4 instances', ended_at: expect.any(String) });

    // A second run finds nothing to change.
    expect((await server.client.post(`/api/jobs/${id}/run`)).body).toEqual({ summary: 'Updated 0 of 4 instances' });
  });

  it('uses tailnet "-" by default', async () => {
    mock.handle(json(200, { devices: [] }));
    const id = await configure('tailscale_sync', { api_key: 'k', api_url: mock.url + '/' });
    expect((await server.client.post(`/api/jobs/${id}/run`)).status).toBe(200);
    expect(mock.requests[0]!.path).toBe('/api/v2/tailnet/-/devices');
  });
});

describe('patchmon_sync', () => {
  const hosts = {
    hosts: [
      { id: 'a1', friendly_name: 'Mail Server', hostname: 'mail.lan', ip: '10.0.0.3', host_groups: [] },
      { id: 'a2', friendly_name: 'backup', hostname: 'nas-01', ip: '10.0.0.4', host_groups: [{ id: 'g', name: 'Storage' }] },
    ],
    total: 2,
  };

  it('base64-encodes a key:secret token for Basic auth and matches hostname and friendly_name', async () => {
    mock.handle(json(200, hosts));
    const mail = await create('MAIL');
    const backup = await create('backup');
    const stale = await create('stale', { patchmon: 1 });
    const id = await configure('patchmon_sync', { api_url: `${mock.url}/api/v1/api/hosts`, api_token: 'key:secret' });

    const res = await server.client.post(`/api/jobs/${id}/run`);
    expect([res.status, res.body]).toEqual([200, { summary: 'Updated 3 of 3 instances' }]);
    expect(mock.requests[0]).toMatchObject({ path: '/api/v1/api/hosts', headers: { authorization: `Basic ${Buffer.from('key:secret').toString('base64')}` } });
    expect((await instance(mail)).patchmon).toBe(1);
    expect((await instance(backup)).patchmon).toBe(1);
    expect((await instance(stale)).patchmon).toBe(0);
    expect((await history(stale))[0]).toMatchObject({ field: 'patchmon', old_value: '1', new_value: '0', changed_by: 'job:patchmon_sync' });
  });

  it('sends a token without a colon as given', async () => {
    mock.handle(json(200, { hosts: [], total: 0 }));
    const id = await configure('patchmon_sync', { api_url: `${mock.url}/hosts`, api_token: 'a2V5OnNlY3JldA==' });
    expect((await server.client.post(`/api/jobs/${id}/run`)).status).toBe(200);
    expect(mock.requests[0]!.headers.authorization).toBe('Basic a2V5OnNlY3JldA==');
  });
});

describe('semaphore_sync', () => {
  it('reads a static (INI) inventory with Bearer auth and sets semaphore by name', async () => {
    const inventory = '[web]\nweb[01:02].lan ansible_user=x\n[web:vars]\ndb\n[db]\ndb ansible_host=10.0.0.5\n';
    mock.handle(json(200, { id: 3, name: 'prod', type: 'static', inventory }));
    const web2 = await create('web02');
    const db = await create('db');
    const other = await create('other', { semaphore: 1 });
    const id = await configure('semaphore_sync', { api_url: `${mock.url}/api/project/1/inventory/3`, api_token: 'sem-token' });

    expect((await server.client.post(`/api/jobs/${id}/run`)).body).toEqual({ summary: 'Updated 3 of 3 instances' });
    expect(mock.requests[0]).toMatchObject({ path: '/api/project/1/inventory/3', headers: { authorization: 'Bearer sem-token' } });
    expect([(await instance(web2)).semaphore, (await instance(db)).semaphore, (await instance(other)).semaphore]).toEqual([1, 1, 0]);
    expect((await history(db))[0]).toMatchObject({ field: 'semaphore', new_value: '1', changed_by: 'job:semaphore_sync' });
  });

  it('reads a static-yaml inventory', async () => {
    const inventory = 'all:\n  children:\n    web:\n      hosts:\n        app[a:b]:\n';
    mock.handle(json(200, { id: 4, name: 'y', type: 'static-yaml', inventory }));
    const b = await create('appb');
    const id = await configure('semaphore_sync', { api_url: `${mock.url}/inv`, api_token: 't' });
    expect((await server.client.post(`/api/jobs/${id}/run`)).body).toEqual({ summary: 'Updated 1 of 1 instances' });
    expect((await instance(b)).semaphore).toBe(1);
  });

  it('fails on another inventory type, naming it, and changes nothing', async () => {
    mock.handle(json(200, { id: 5, name: 'f', type: 'file', inventory: '/etc/ansible/hosts' }));
    await create('x', { semaphore: 1 });
    const before = await snapshot();
    const id = await configure('semaphore_sync', { api_url: `${mock.url}/inv`, api_token: 't' });
    const res = await server.client.post(`/api/jobs/${id}/run`);
    expect([res.status, res.body]).toEqual([500, { error: 'Semaphore inventory type "file" is not supported (expected static or static-yaml)' }]);
    expect(await snapshot()).toEqual(before);
  });
});

describe('error runs', () => {
  async function runFails(key: string, config: Record<string, unknown>, error: string) {
    await create('web01', { tailscale: 1, tailscale_ip: '100.64.0.1', patchmon: 1, semaphore: 1 });
    const before = await snapshot();
    const id = await configure(key, config);
    const res = await server.client.post(`/api/jobs/${id}/run`);
    expect([res.status, res.body]).toEqual([500, { error }]);
    expect(await lastRun(id)).toMatchObject({ status: 'error', result: error, ended_at: expect.any(String) });
    expect(await snapshot()).toEqual(before);
  }

  it('missing config fails without contacting anything', async () => {
    await runFails('tailscale_sync', { api_url: mock.url }, 'tailscale_sync is not configured: set api_key');
    await runFails('semaphore_sync', { api_url: mock.url }, 'semaphore_sync is not configured: set api_token');
    expect(mock.requests).toEqual([]);
  });

  it('a job never configured: 500 naming exactly what to set, an error run recorded, and the job says what is missing', async () => {
    const id = (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === 'patchmon_sync').id;
    const job = (await server.client.get(`/api/jobs/${id}`)).body;
    expect(job).toMatchObject({ configured: false, missing: ['api_url', 'api_token'] });
    const res = await server.client.post(`/api/jobs/${id}/run`);
    expect([res.status, res.body]).toEqual([500, { error: 'patchmon_sync is not configured: set api_url and api_token' }]);
    expect(await lastRun(id)).toMatchObject({ status: 'error', result: 'patchmon_sync is not configured: set api_url and api_token' });

    await server.client.put(`/api/jobs/${id}`, { config: { api_url: `${mock.url}/hosts` } });
    expect((await server.client.get('/api/jobs')).body.find((j: { id: number }) => j.id === id)).toMatchObject({ configured: false, missing: ['api_token'] });
    await server.client.put(`/api/jobs/${id}`, { config: { api_token: '   ' } });
    expect((await server.client.get(`/api/jobs/${id}`)).body).toMatchObject({ configured: false, missing: ['api_token'] });
    const saved = await server.client.put(`/api/jobs/${id}`, { config: { api_token: 'a:b' } });
    expect(saved.body).toMatchObject({ configured: true, missing: [] });
    expect(mock.requests).toEqual([]);
  });

  it.each([
    [401, 'Unauthorized'],
    [503, 'Service Unavailable'],
  ])('a %i from the remote fails the run naming the status', async (status, text) => {
    mock.handle(json(status, { message: 'no' }));
    await runFails('patchmon_sync', { api_url: `${mock.url}/hosts`, api_token: 'a:b' }, `PatchMon answered HTTP ${status} ${text}`);
  });

  it('a remote that never answers fails the run at the timeout', async () => {
    mock.handle(() => undefined);
    await runFails('tailscale_sync', { api_key: 'k', api_url: mock.url }, 'Tailscale did not answer within 300 ms');
  });

  it('a malformed answer fails the run and changes nothing', async () => {
    mock.handle(json(200, { devices: [{ hostname: 'web01', addresses: 'not-a-list' }] }));
    await runFails('tailscale_sync', { api_key: 'k', api_url: mock.url }, 'Tailscale answered with an unexpected shape (devices.0.addresses: Invalid input: expected array, received string)');
  });

  it('a body that is not JSON fails the run', async () => {
    mock.handle(json(200, '<html>login</html>'));
    await runFails('semaphore_sync', { api_url: `${mock.url}/inv`, api_token: 't' }, 'Semaphore answered with a body that is not JSON');
  });

  it('an unreachable remote fails the run naming where', async () => {
    const url = mock.url;
    await mock.close();
    await runFails('patchmon_sync', { api_url: `${url}/hosts`, api_token: 'a:b' }, `could not reach PatchMon at ${url}: ECONNREFUSED`);
  });
});
