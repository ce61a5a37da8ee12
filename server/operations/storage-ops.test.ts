import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, enrolledHost, heartbeat, startHostServer } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// In-process, the bad input and refusals of host storage, downloads, pushes and the agent's fetch
// (test/host-storage.test.ts holds the built server to the same and more).

let server: TestServer;
beforeEach(async () => {
  server = await startHostServer();
});
afterEach(() => server.stop());

const LOCAL = { storage: 'local', type: 'dir', content: ['iso', 'vztmpl', 'snippets'], avail: 10, total: 20, active: true, shared: false };
const LVM = { storage: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'], active: true, shared: false };
const DOWNLOAD = { url: 'https://mirror.example/debian.iso', filename: 'debian.iso', content: 'iso' };

async function host(storages: object[] = [LOCAL, LVM]) {
  const enrolled = await enrolledHost(server);
  expect((await heartbeat(server, enrolled.host_token, { storages })).status).toBe(200);
  return { id: enrolled.host_id, agent: server.anonymous().fresh(bearer(enrolled.host_token)) };
}

const count = (table: string) => server.db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;

describe('host storage in-process', () => {
  it('keeps a heartbeat’s storages and an agent’s volumes, and refuses what does not fit', async () => {
    const h = await host();
    expect((await h.agent.post('/api/agent/storage', { storage: 'local', volumes: [{ volid: 'local:iso/a.iso', format: 'iso', size: 5 }] })).status).toBe(204);
    expect((await server.client.get(`/api/hosts/${h.id}/storage`)).body[0]).toMatchObject({ storage: 'local', volumes: [{ volid: 'local:iso/a.iso', format: 'iso', size: 5, ctime: null }] });
    expect((await h.agent.post('/api/agent/storage', { storage: 'nfs', volumes: [] })).body).toEqual({ error: "storage nfs is not one this host's last heartbeat listed" });
    const bad = await h.agent.post('/api/agent/storage', { storage: 'local', volumes: [{ volid: 'local-lvm:iso/a.iso', format: 'iso', size: 5 }] });
    expect([bad.status, bad.body.errors[0].field]).toEqual([400, 'volumes.0.volid']);
    expect((await h.agent.post('/api/agent/storage', '{"storage": "local", "volumes": [')).status).toBe(400);
    expect((await server.client.post('/api/agent/storage', { storage: 'local', volumes: [] })).status).toBe(401);
  });

  it('refuses downloads that cannot be done, and a URL with credentials without keeping it', async () => {
    const h = await host();
    const ops = count('operations');
    const at = (storage: string, body: object) => server.client.post(`/api/hosts/${h.id}/storage/${storage}/downloads`, body);
    expect((await at('local-lvm', DOWNLOAD)).body).toEqual({ error: 'storage local-lvm does not hold iso' });
    expect((await at('nowhere', DOWNLOAD)).status).toBe(409);
    expect((await at('local', { ...DOWNLOAD, url: 'https://u:hunter2pass@mirror.example/debian.iso' })).body.errors).toEqual([
      { field: 'url', message: 'must not carry a user name or password (user:password@): use a URL that needs none' },
    ]);
    expect((await at('local', { ...DOWNLOAD, filename: 'a/b.iso' })).body.errors[0].field).toBe('filename');
    expect(count('operations')).toBe(ops);
    expect(JSON.stringify(server.db.prepare('SELECT * FROM audit_log').all())).not.toContain('hunter2pass');
    const ok = await at('local', DOWNLOAD);
    expect(ok.status, ok.text).toBe(202);
  });

  it('refuses a push of a file the cache does not hold, and a fetch by a host without a push of it', async () => {
    const h = await host();
    const push = await server.client.post(`/api/hosts/${h.id}/storage/local/files`, { file_id: 424242, content: 'iso' });
    expect([push.status, push.body.errors[0].field]).toEqual([400, 'file_id']);
    for (const id of [1, 424242]) expect([(await h.agent.get(`/api/agent/files/${id}`)).status, (await h.agent.get(`/api/agent/files/${id}`)).body]).toEqual([401, { error: 'invalid token' }]);
    expect((await server.client.get('/api/agent/files/1')).status).toBe(401);
  });
});
