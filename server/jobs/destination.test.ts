// A stored job secret goes only where it was first sent: changing api_url needs the secret typed again.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, startMockRemote, type MockRemote } from '../../test/helpers/remote.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';

let server: TestServer;
let trusted: MockRemote;
let listener: MockRemote;
beforeEach(async () => {
  trusted = await startMockRemote(json(200, { devices: [], hosts: [] }));
  listener = await startMockRemote(json(200, { devices: [], hosts: [] }));
  server = await startServer({ dbPath: tempDbPath() });
});
afterEach(async () => {
  await server.stop();
  await trusted.close();
  await listener.close();
  removeTempDbs();
});

const jobId = async (key: string) => (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === key).id as number;
const put = (id: number, config: Record<string, unknown>) => server.client.put(`/api/jobs/${id}`, { config });

describe('a changed api_url with a stored secret', () => {
  it('refuses the Tailscale key sent back as **REDACTED** or left out with 400 naming it, keeps the stored settings, and the next run goes where it went', async () => {
    const id = await jobId('tailscale_sync');
    expect((await put(id, { api_key: 'tskey-stored-secret', api_url: trusted.url })).status).toBe(200);
    const before = (await server.client.get(`/api/jobs/${id}`)).body;

    const refused = { error: 'api_key must be entered again when api_url changes', errors: [{ field: 'config.api_key', message: 'must be entered again when api_url changes' }] };
    for (const config of [{ api_url: listener.url, api_key: '**REDACTED**' }, { api_url: listener.url }, { api_url: null }, { api_url: '' }]) {
      const res = await put(id, config);
      expect([res.status, res.body], JSON.stringify(config)).toEqual([400, refused]);
    }
    expect((await server.client.get(`/api/jobs/${id}`)).body).toEqual(before);
    const audit = (await server.client.get('/api/audit?limit=100')).body as { summary: string }[];
    // Only the first save is in the audit: a refused update writes nothing.
    expect(audit.filter((e) => e.summary.includes('settings of job')).map((e) => e.summary)).toEqual(['admin changed the settings of job “Tailscale sync”: config.api_key, config.api_url']);

    expect((await server.client.post(`/api/jobs/${id}/run`)).status).toBe(200);
    expect(listener.requests).toEqual([]);
    expect(trusted.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tskey-stored-secret']);
  });

  it('accepts the same address written another way, another tailnet, and a secret typed again', async () => {
    const id = await jobId('tailscale_sync');
    expect((await put(id, { api_key: 'tskey-stored-secret', api_url: trusted.url })).status).toBe(200);
    expect((await put(id, { api_url: `${trusted.url.toUpperCase().replace('HTTP', 'http')}/`, api_key: '**REDACTED**' })).status).toBe(200);
    expect((await put(id, { tailnet: 'example.com' })).status).toBe(200);
    const typed = await put(id, { api_url: listener.url, api_key: 'tskey-new-secret' });
    expect([typed.status, typed.body.config]).toEqual([200, { api_key: '**REDACTED**', api_url: listener.url, tailnet: 'example.com' }]);
    expect((await server.client.post(`/api/jobs/${id}/run`)).status).toBe(200);
    expect(listener.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tskey-new-secret']);
  });

  it('PatchMon: a URL set after the token, or again after it was cleared, needs the token again; removing the token with the URL change is fine', async () => {
    const id = await jobId('patchmon_sync');
    expect((await put(id, { api_token: 'pm-key:pm-secret' })).status).toBe(200);
    const first = await put(id, { api_url: `${listener.url}/hosts` });
    expect([first.status, first.body.errors]).toEqual([400, [{ field: 'config.api_token', message: 'must be entered again when api_url changes' }]]);
    expect((await put(id, { api_url: `${trusted.url}/hosts`, api_token: 'pm-key:pm-secret' })).status).toBe(200);
    // Cleared, the job has nowhere to send the token: allowed. Set again, it is a new address.
    expect((await put(id, { api_url: '' })).status).toBe(200);
    expect((await put(id, { api_url: `${listener.url}/hosts`, api_token: '**REDACTED**' })).status).toBe(400);
    expect((await put(id, { api_url: `${listener.url}/hosts`, api_token: null })).status).toBe(200);
    expect((await server.client.post(`/api/jobs/${id}/run`)).status).toBe(500);
    expect(listener.requests).toEqual([]);
  });

  it('Semaphore: the same rule', async () => {
    const id = await jobId('semaphore_sync');
    expect((await put(id, { api_url: `${trusted.url}/inv`, api_token: 'sem-secret' })).status).toBe(200);
    const res = await put(id, { api_url: `${listener.url}/inv`, api_token: '**REDACTED**' });
    expect([res.status, res.body.error]).toEqual([400, 'api_token must be entered again when api_url changes']);
  });
});
