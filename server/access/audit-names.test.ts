import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, enrolledHost, startHostServer } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// The audit page words an entry from what the entry holds: the names are written with it, at the
// time of the change, so the page says "host pve-rack-2" and "with API token ci" and not "host 1".
let server: TestServer;
beforeEach(async () => {
  server = await startHostServer();
});
afterEach(() => server.stop());

type Entry = { action: string; actor: string | null; target: string | null; detail: Record<string, unknown> };
const audit = async (): Promise<Entry[]> => (await server.client.get('/api/audit')).body;

describe('audit entries name what they are about', () => {
  it('host actions of a person carry the host name', async () => {
    const { host_id } = await enrolledHost(server, { hostname: 'pve-rack-2' });
    expect((await server.client.patch(`/api/hosts/${host_id}`, { sync_registry: true })).status).toBe(200);
    expect((await server.client.post(`/api/hosts/${host_id}/revoke-token`)).status).toBe(204);
    expect((await server.client.delete(`/api/hosts/${host_id}?force=true`)).status).toBe(200);
    const byAction = Object.fromEntries((await audit()).map((e) => [e.action, e]));
    expect(byAction['host.update']).toMatchObject({ target: `host ${host_id}`, subject: { type: 'host', id: String(host_id), name: 'pve-rack-2' }, detail: { host: 'pve-rack-2', sync_registry: true } });
    expect(byAction['host.revoke_token']).toMatchObject({ detail: { host: 'pve-rack-2' } });
    expect(byAction['host.force_delete']).toMatchObject({ detail: { host: 'pve-rack-2' } });
  });

  it('an entry made with a personal API token names the token, for request rows and host actions alike', async () => {
    const created = await server.client.post('/api/tokens', { name: 'ci', role: 'administrator' });
    expect(created.status).toBe(201);
    const auth = bearer(created.body.token);
    const { host_id } = await enrolledHost(server, { hostname: 'pve-ci' });
    const script = server.anonymous();
    expect((await script.post('/api/instances', { vmid: 321, name: 'from-ci', state: 'testing', stack: 'development' }, auth)).status).toBe(201);
    expect((await script.patch(`/api/hosts/${host_id}`, { sync_registry: true }, auth)).status).toBe(200);
    const entries = await audit();
    const token = { id: created.body.id, name: 'ci' };
    expect(entries.find((e) => e.action === 'request' && e.target === 'instance 321')).toMatchObject({ actor: 'admin', detail: { token } });
    expect(entries.find((e) => e.action === 'host.update')).toMatchObject({ actor: 'admin', detail: { host: 'pve-ci', token } });
    expect(JSON.stringify(entries)).not.toContain(created.body.token);
    // A browser session's entries name no token.
    expect((await server.client.patch(`/api/hosts/${host_id}`, { sync_registry: false })).status).toBe(200);
    expect((await audit())[0]!.detail).toEqual({ host: 'pve-ci', sync_registry: false });
  });
});
