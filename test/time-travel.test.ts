// Time travel (issue 39) through the BUILT server (dist/server/main.js in its own process, a real
// SQLite file): GET /api/instances?at= and GET /api/instances/:vmid?at= give the registry as it was.
// The server keeps the wall clock, so each moment is read from the history it wrote (changed_at) or
// taken around a request. server/registry/past.test.ts holds the rules to the millisecond in process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountsWithTokens } from './helpers/accounts-db.js';
import { ensureBuilt } from './helpers/build.js';
import { startHeadless, type Headless } from './helpers/headless.js';
import { TestClient } from './helpers/http.js';
import { sendBytes } from './helpers/built-server.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-time-travel-'));
let server: Headless;
let operator: TestClient;
let viewer: TestClient;
let admin: TestClient;
let viewerToken: string;

beforeAll(async () => {
  await ensureBuilt();
  const dbPath = path.join(dir, 'homefleet.db');
  let adminToken: string, operatorToken: string;
  [[adminToken], [operatorToken], [viewerToken]] = (await accountsWithTokens(dbPath, [
    { username: 'admin', role: 'administrator', tokens: 1 },
    { username: 'operator', role: 'operator', tokens: 1 },
    { username: 'viewer', role: 'viewer', tokens: 1 },
  ])) as [[string], [string], [string]];
  server = await startHeadless({ DB_PATH: dbPath }, { shared: true });
  const as = (token: string) => new TestClient(server.local, { authorization: `Bearer ${token}` });
  [admin, operator, viewer] = [as(adminToken), as(operatorToken), as(viewerToken)];
}, 60_000);

afterAll(async () => {
  expect((await server?.stop())?.exitCode).toBe(0);
  fs.rmSync(dir, { recursive: true, force: true });
});

const pause = () => new Promise((resolve) => setTimeout(resolve, 15));
const iso = (ms: number) => new Date(ms).toISOString();
const asOf = async (client: TestClient, at: string, query = '') => {
  const res = await client.get(`/api/instances?at=${encodeURIComponent(at)}${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body as Array<Record<string, unknown>>;
};
/** The changed_at of each of the instance's history entries, oldest first. */
const moments = async (vmid: number) => ((await viewer.get(`/api/instances/${vmid}/history`)).body as Array<{ changed_at: string }>).map((h) => h.changed_at).reverse();
const write = async (res: Promise<{ status: number; text: string }>, status: number) => expect((await res).status, (await res).text).toBe(status);

describe('GET /api/instances?at= (built server)', () => {
  it('an instance changed at three moments shows each value at each moment, in the list and alone', async () => {
    await write(operator.post('/api/instances', { vmid: 701, name: 'web-a', state: 'testing', stack: 'development' }), 201);
    await pause();
    await write(operator.put('/api/instances/701', { name: 'web-b', state: 'deployed' }), 200);
    await pause();
    await write(operator.put('/api/instances/701', { name: 'web-c', tailscale_ip: '100.64.1.2' }), 200);
    await pause();
    await write(operator.put('/api/instances/701', { stack: 'production', argus: 1 }), 200);
    const [created, first, second, third] = await moments(701).then((m) => [m[0]!, m[1]!, m[3]!, m[5]!] as const);
    const seen = async (at: string) => (await asOf(viewer, at, '&search=web-')).map((r) => [r.vmid, r.name, r.state, r.stack, r.tailscale_ip, r.argus, r.current_vmid, r.host]);
    expect(await seen(iso(Date.parse(created) - 1))).toEqual([]);
    expect(await seen(created)).toEqual([[701, 'web-a', 'testing', 'development', '', 0, 701, null]]);
    expect(await seen(first)).toEqual([[701, 'web-b', 'deployed', 'development', '', 0, 701, null]]);
    expect(await seen(second)).toEqual([[701, 'web-c', 'deployed', 'development', '100.64.1.2', 0, 701, null]]);
    expect(await seen(third)).toEqual([[701, 'web-c', 'deployed', 'production', '100.64.1.2', 1, 701, null]]);
    expect(await seen(iso(Date.parse(second) - 1))).toEqual([[701, 'web-b', 'deployed', 'development', '', 0, 701, null]]);
    const alone = await viewer.get(`/api/instances/701?at=${encodeURIComponent(first)}`);
    expect([alone.status, alone.body.name, alone.body.deploy, alone.body.current_vmid]).toEqual([200, 'web-b', null, 701]);
    // The filters read the values then.
    expect((await asOf(viewer, first, '&state=testing')).map((r) => r.vmid)).toEqual([]);
    expect((await asOf(viewer, created, '&state=testing&search=web-a')).map((r) => r.vmid)).toEqual([701]);
  });

  it('a deleted instance shows before its deletion and not after; its vmid reused is another instance', async () => {
    await write(operator.post('/api/instances', { vmid: 702, name: 'old-cache', state: 'deployed', stack: 'development' }), 201);
    await pause();
    const before = Date.now();
    await pause();
    await write(operator.delete('/api/instances/702'), 204);
    await pause();
    const gone = Date.now();
    await pause();
    await write(operator.post('/api/instances', { vmid: 702, name: 'new-cache', state: 'testing', stack: 'development' }), 201);
    // An instant after the create that is already past when asked: an `at` in the server's current
    // millisecond is "now" (the live list, no current_vmid), which a quick machine reaches.
    const reused = Date.now();
    await pause();
    const names = async (at: number) => (await asOf(viewer, iso(at), '&search=cache')).map((r) => [r.vmid, r.name, r.current_vmid]);
    expect(await names(before)).toEqual([[702, 'old-cache', null]]);
    expect(await names(gone)).toEqual([]);
    expect(await names(reused)).toEqual([[702, 'new-cache', 702]]);
    expect((await viewer.get(`/api/instances/702?at=${iso(before)}`)).body).toMatchObject({ name: 'old-cache', current_vmid: null });
    expect(await viewer.get(`/api/instances/702?at=${iso(gone)}`).then((r) => [r.status, r.body])).toEqual([404, { error: 'no instance had this vmid then' }]);
    // The reused vmid's timeline is the new instance's alone.
    expect((await viewer.get('/api/instances/702/history')).body.map((h: { field: string }) => h.field)).toEqual(['created']);
  });

  it('an at in the future is the list now', async () => {
    const now = await viewer.get('/api/instances');
    expect(await asOf(viewer, '2999-01-01T00:00:00Z')).toEqual(now.body);
  });

  it('refuses bad input with 400 naming the parameter, never a 500', async () => {
    const rule = 'must be an ISO 8601 date and time with its zone, e.g. 2026-11-22T10:15:00Z (a date alone is its midnight UTC)';
    for (const bad of ['tomorrow', '2026-11-22T10:15:00', '2026-02-30', '-1', 'x'.repeat(5000), '2026-11-22T10:15:00Z%00', "2026-01-01T00:00:00Z' OR 1=1 --"]) {
      const list = await viewer.get(`/api/instances?at=${encodeURIComponent(bad)}`);
      expect([list.status, list.body]).toEqual([400, { errors: [{ field: 'at', message: rule }] }]);
      const one = await viewer.get(`/api/instances/701?at=${encodeURIComponent(bad)}`);
      expect([one.status, one.body]).toEqual([400, { errors: [{ field: 'at', message: rule }] }]);
    }
    // A repeated parameter: the first counts, as for every list parameter.
    expect((await viewer.get('/api/instances?at=nonsense&at=2026-01-01T00:00:00Z')).status).toBe(400);
    expect((await viewer.get('/api/instances?at=2026-01-01T00:00:00Z&at=nonsense')).status).toBe(200);
    const host = await viewer.get('/api/instances?at=2026-01-01T00:00:00Z&host_id=none');
    expect([host.status, host.body]).toEqual([400, { errors: [{ field: 'host_id', message: 'cannot be combined with at: where guests ran is not kept in history' }] }]);
    expect(await viewer.get('/api/instances/abc?at=2026-01-01T00:00:00Z').then((r) => [r.status, r.body])).toEqual([400, { error: 'invalid vmid' }]);
    // Raw bytes the client did not encode: still a client error.
    expect((await sendBytes(`${server.local}/api/instances?at=%E0%A4%A`, 'GET', { authorization: `Bearer ${viewerToken}` })).status).toBe(400);
    expect(server.log().filter((l) => l.level >= 50)).toEqual([]);
  });

  it('every role reads the past (fleet.read); no credential is 401', async () => {
    const at = iso(Date.now());
    for (const client of [viewer, operator, admin]) {
      expect((await client.get(`/api/instances?at=${at}`)).status).toBe(200);
      expect((await client.get(`/api/instances/701?at=${at}`)).status).toBe(200);
    }
    const anonymous = new TestClient(server.local);
    expect((await anonymous.get(`/api/instances?at=${at}`)).status).toBe(401);
    expect((await anonymous.get(`/api/instances/701?at=${at}`)).status).toBe(401);
  });
});
