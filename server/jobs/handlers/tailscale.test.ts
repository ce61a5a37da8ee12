// Tailscale sync against a real HTTP server on 127.0.0.1 answering the documented body of
// GET /api/v2/tailnet/{tailnet}/devices: two devices may share a hostname, and Tailscale then gives
// the second a MagicDNS name of its own (`adguard-1`). Such a name is never settled silently.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildInstance } from '../../../test/helpers/factories.js';
import { json, startMockRemote, type MockRemote } from '../../../test/helpers/remote.js';
import { startServer, type TestServer } from '../../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../../test/helpers/tempdb.js';
import { tailscaleDevice as device } from '../../../test/helpers/tailscale.js';

let server: TestServer;
let mock: MockRemote;
beforeEach(async () => {
  mock = await startMockRemote();
  server = await startServer({ dbPath: tempDbPath() });
});
afterEach(async () => {
  await server.stop();
  await mock.close();
  removeTempDbs();
});

async function create(name: string, fields: Record<string, unknown> = {}) {
  const body = buildInstance({ name, ...fields });
  expect((await server.client.post('/api/instances', body)).status).toBe(201);
  return body.vmid as number;
}
const instance = async (vmid: number) => (await server.client.get(`/api/instances/${vmid}`)).body;

async function configured() {
  const id = (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === 'tailscale_sync').id as number;
  expect((await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'tskey-api-x', api_url: mock.url } })).status).toBe(200);
  return id;
}

it('two devices named adguard: the one whose MagicDNS name is exactly adguard gives the address, and the run says which devices were involved', async () => {
  // The renamed one listed first: taking the first match would give adguard the wrong address.
  mock.handle(json(200, { devices: [device('adguard', 'adguard-1', '100.64.0.11'), device('adguard', 'adguard', '100.64.0.10'), device('web01', 'web01', '100.64.0.1')] }));
  const adguard = await create('adguard');
  const second = await create('adguard-1');
  const web = await create('web01');
  const id = await configured();

  const note = 'Ambiguous: “adguard” matches 2 devices (adguard-1.tail1234.ts.net 100.64.0.11, adguard.tail1234.ts.net 100.64.0.10): took adguard.tail1234.ts.net 100.64.0.10, whose MagicDNS name is adguard';
  expect((await server.client.post(`/api/jobs/${id}/run?dry_run=true`)).body.summary).toBe(`Would update 3 of 3 instances. ${note}`);
  const run = await server.client.post(`/api/jobs/${id}/run`);
  expect([run.status, run.body]).toEqual([200, { summary: `Updated 3 of 3 instances. ${note}` }]);
  expect((await server.client.get(`/api/jobs/${id}`)).body.runs[0]).toMatchObject({ status: 'success', result: `Updated 3 of 3 instances. ${note}` });
  expect(await instance(adguard)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.10' });
  expect(await instance(second)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.11' });
  expect(await instance(web)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.1' });
});

it('a name two devices answer to, neither by its MagicDNS name: no address taken, the instance left as it was, and the run says so', async () => {
  mock.handle(json(200, { devices: [device('nas', 'nas-old', '100.64.0.20'), device('nas', 'nas-new', '100.64.0.21')] }));
  const nas = await create('nas', { tailscale: 1, tailscale_ip: '100.64.0.5' });
  const gone = await create('gone', { tailscale: 1, tailscale_ip: '100.64.0.6' });
  const id = await configured();

  const run = await server.client.post(`/api/jobs/${id}/run`);
  expect(run.body).toEqual({
    summary: 'Updated 1 of 2 instances. Ambiguous: “nas” matches 2 devices (nas-old.tail1234.ts.net 100.64.0.20, nas-new.tail1234.ts.net 100.64.0.21): took none, nas left unchanged',
  });
  expect(await instance(nas)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.5' });
  expect(await instance(gone)).toMatchObject({ tailscale: 0, tailscale_ip: '' });
  expect((await server.client.get(`/api/instances/${nas}/history`)).body.map((h: { field: string }) => h.field)).toEqual(['created']);
});

// The device's IPv6 tailnet address: `tailscale_ip` stays IPv4 (registry-service.md), the IPv6 one is a
// read-only fact beside it, as `host` and `guest_status` are (PRODUCT.md "Guest control through agents").
const ipv6Of = (d: ReturnType<typeof device>) => d.addresses[1]!;
const fieldsOf = async (vmid: number) => ((await server.client.get(`/api/instances/${vmid}/history`)).body as { field: string }[]).map((h) => h.field);

it('the matched device’s IPv6 address is read in tailscale_ipv6, written in no history, export or preview, and cleared when no device matches', async () => {
  const web = device('web01', 'web01', '100.64.0.1');
  mock.handle(json(200, { devices: [web] }));
  const vmid = await create('web01');
  const lonely = await create('lonely');
  const id = await configured();
  const updated: { vmid: number; changed: string[]; tailscale_ipv6: string | null }[] = [];
  server.context.bus.on('instance.updated', ({ instance: i, changed }) => updated.push({ vmid: i.vmid, changed, tailscale_ipv6: i.tailscale_ipv6 }));

  expect((await server.client.post(`/api/jobs/${id}/run?dry_run=true`)).status).toBe(200);
  expect(await instance(vmid)).toMatchObject({ tailscale_ip: '', tailscale_ipv6: null });

  expect((await server.client.post(`/api/jobs/${id}/run`)).body).toEqual({ summary: 'Updated 1 of 2 instances' });
  expect(await instance(vmid)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.1', tailscale_ipv6: ipv6Of(web) });
  const list = (await server.client.get('/api/instances')).body as { vmid: number; tailscale_ipv6: string | null }[];
  expect(list.map((i) => [i.vmid, i.tailscale_ipv6])).toEqual([[lonely, null], [vmid, ipv6Of(web)]]);
  expect(updated).toEqual([{ vmid, changed: ['tailscale_ip', 'tailscale', 'tailscale_ipv6'], tailscale_ipv6: ipv6Of(web) }]);
  expect(await fieldsOf(vmid)).toEqual(['tailscale', 'tailscale_ip', 'created']);
  const exported = (await server.client.get('/api/export')).body;
  expect(exported.instances.find((i: { vmid: number }) => i.vmid === vmid)).not.toHaveProperty('tailscale_ipv6');
  expect(JSON.stringify(exported)).not.toContain(ipv6Of(web));

  // Not settable through the registry API: the field is ignored, as `host` is.
  const put = await server.client.put(`/api/instances/${vmid}`, { tailscale_ipv6: 'fd7a:115c:a1e0::dead', state: 'testing' });
  expect([put.status, put.body.tailscale_ipv6]).toEqual([200, ipv6Of(web)]);

  // Only the IPv6 address moved: the instance is announced with it, nothing else changed, nothing in history.
  const moved = { ...web, addresses: ['100.64.0.1', 'fd7a:115c:a1e0:ab12:4843:cd96:6258:b2ff'] };
  mock.handle(json(200, { devices: [moved] }));
  updated.length = 0;
  expect((await server.client.post(`/api/jobs/${id}/run`)).body).toEqual({ summary: 'Updated 0 of 2 instances' });
  expect((await instance(vmid)).tailscale_ipv6).toBe('fd7a:115c:a1e0:ab12:4843:cd96:6258:b2ff');
  expect(updated).toEqual([{ vmid, changed: ['tailscale_ipv6'], tailscale_ipv6: 'fd7a:115c:a1e0:ab12:4843:cd96:6258:b2ff' }]);
  expect(await fieldsOf(vmid)).toEqual(['state', 'tailscale', 'tailscale_ip', 'created']);
  updated.length = 0;
  await server.client.post(`/api/jobs/${id}/run`);
  expect(updated).toEqual([]);

  mock.handle(json(200, { devices: [] }));
  expect((await server.client.post(`/api/jobs/${id}/run`)).body).toEqual({ summary: 'Updated 1 of 2 instances' });
  expect(await instance(vmid)).toMatchObject({ tailscale: 0, tailscale_ip: '', tailscale_ipv6: null });
  expect(await fieldsOf(vmid)).toEqual(['tailscale', 'tailscale_ip', 'state', 'tailscale', 'tailscale_ip', 'created']);
});

it('a device without an IPv6 address, or a name left unsettled, keeps no address and changes none', async () => {
  const nas = device('nas', 'nas', '100.64.0.20');
  mock.handle(json(200, { devices: [nas, { ...device('bare', 'bare', '100.64.0.30'), addresses: ['100.64.0.30', 'fe80::1%eth0'] }] }));
  const vmid = await create('nas');
  const bare = await create('bare');
  const id = await configured();
  await server.client.post(`/api/jobs/${id}/run`);
  expect((await instance(vmid)).tailscale_ipv6).toBe(ipv6Of(nas));
  expect(await instance(bare)).toMatchObject({ tailscale: 1, tailscale_ip: '100.64.0.30', tailscale_ipv6: null });

  // Two devices answer to nas now, neither by its MagicDNS name: the instance is left as it was, its IPv6 address too.
  mock.handle(json(200, { devices: [device('nas', 'nas-old', '100.64.0.21'), device('nas', 'nas-new', '100.64.0.22')] }));
  await server.client.post(`/api/jobs/${id}/run`);
  expect(await instance(vmid)).toMatchObject({ tailscale_ip: '100.64.0.20', tailscale_ipv6: ipv6Of(nas) });
});

it('the address belongs to the instance: it follows a renumbering, goes with a delete and an import, and an import’s own is ignored', async () => {
  const web = device('web01', 'web01', '100.64.0.1');
  mock.handle(json(200, { devices: [web] }));
  const vmid = await create('web01');
  const id = await configured();
  await server.client.post(`/api/jobs/${id}/run`);

  expect((await server.client.put(`/api/instances/${vmid}`, { vmid: vmid + 5000 })).body.tailscale_ipv6).toBe(ipv6Of(web));
  expect((await instance(vmid + 5000)).tailscale_ipv6).toBe(ipv6Of(web));

  // A vmid used again never shows the address of the instance it replaced.
  expect((await server.client.delete(`/api/instances/${vmid + 5000}`)).status).toBe(204);
  expect((await server.client.post('/api/instances', buildInstance({ vmid: vmid + 5000, name: 'web01' }))).body.tailscale_ipv6).toBeNull();
  await create('other');

  await server.client.post(`/api/jobs/${id}/run`);
  const doc = (await server.client.get('/api/export')).body;
  const planted = { ...doc, instances: doc.instances.map((i: object) => ({ ...i, tailscale_ipv6: 'fd7a:115c:a1e0::bad' })) };
  expect((await server.client.post('/api/import', planted)).body).toEqual({ imported: 2 });
  // The import replaced the instances: none carries a tailnet fact until the next run finds it again.
  const list = (await server.client.get('/api/instances')).body as { name: string; tailscale_ip: string; tailscale_ipv6: string | null }[];
  expect(list.map((i) => [i.name, i.tailscale_ip, i.tailscale_ipv6])).toEqual([['other', '', null], ['web01', '100.64.0.1', null]]);
  await server.client.post(`/api/jobs/${id}/run`);
  expect((await instance(vmid + 5000)).tailscale_ipv6).toBe(ipv6Of(web));
});
