// Tailscale sync against a real HTTP server on 127.0.0.1 answering the documented body of
// GET /api/v2/tailnet/{tailnet}/devices: two devices may share a hostname, and Tailscale then gives
// the second a MagicDNS name of its own (`adguard-1`). Such a name is never settled silently.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildInstance } from '../../../test/helpers/factories.js';
import { json, startMockRemote, type MockRemote } from '../../../test/helpers/remote.js';
import { startServer, type TestServer } from '../../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../../test/helpers/tempdb.js';

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

let serial = 0;
/** One device as Tailscale's API documents it (fields this job does not read included). */
function device(hostname: string, magicDnsName: string, ipv4: string) {
  const id = String(92960230385 + ++serial);
  return {
    addresses: [ipv4, `fd7a:115c:a1e0:ab12:4843:cd96:${serial.toString(16)}:1`],
    id,
    nodeId: `n${id}CNTRL`,
    user: 'amelie@example.com',
    name: `${magicDnsName}.tail1234.ts.net`,
    hostname,
    clientVersion: '1.76.1-t4d1b3ea29-g4b7d9b4ae',
    updateAvailable: false,
    os: 'linux',
    created: '2026-11-01T05:23:30Z',
    lastSeen: '2026-11-22T09:00:00Z',
    keyExpiryDisabled: false,
    expires: '2027-05-30T04:44:05Z',
    authorized: true,
    isExternal: false,
    machineKey: '',
    nodeKey: 'nodekey:01234567890abcdef',
    blocksIncomingConnections: false,
    enabledRoutes: [],
    advertisedRoutes: [],
    clientConnectivity: { endpoints: ['199.9.14.201:59128'], latency: {}, mappingVariesByDestIP: false, clientSupports: { hairPinning: false, ipv6: false, pcp: false, pmp: false, udp: true, upnp: false } },
    tags: [],
    tailnetLockError: '',
    tailnetLockKey: 'nlpub:0123456789abcdef',
  };
}

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
