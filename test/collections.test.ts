// Tags, bulk edit and collections (PRODUCT.md "Collections, scripts, campaigns and release channels")
// through the BUILT server (dist/server/main.js in its own process) over real HTTP on 127.0.0.1, with
// a real SQLite file and a host that speaks the agent's heartbeat by hand: every route, status and
// role, bad bodies, and bulk edits fired in parallel.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { healthTimes, whileHealthPolled } from './helpers/health-poll.js';
import { bearer, heldPosts } from './helpers/hosts.js';
import { TestClient } from './helpers/http.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';

const SETUP_TOKEN = 'collections-test-setup-token-0123456789';

let server: Headless;
let dbPath: string;
let admin: TestClient;
let operator: TestClient;
let operatorToken: string;
let viewer: TestClient;
let anonymous: TestClient;
let hostId: number;

async function tokenFor(role: 'viewer' | 'operator'): Promise<string> {
  const res = await admin.post('/api/tokens', { name: `${role} script`, role });
  expect(res.status, res.text).toBe(201);
  return res.body.token as string;
}

async function instance(vmid: number, name: string, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await admin.post('/api/instances', { vmid, name, state: 'testing', stack: 'development', ...extra });
  expect(res.status, res.text).toBe(201);
}

/** Every history row of these instances, as the database holds it. */
function historyRows(vmids: number[]): Array<{ vmid: number; field: string; old_value: string | null; new_value: string | null }> {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT i.vmid, h.field, h.old_value, h.new_value FROM instance_history h JOIN instances i ON i.id = h.instance_id
          WHERE i.vmid IN (SELECT value FROM json_each(?)) AND h.field != 'created' ORDER BY h.id`,
      )
      .all(JSON.stringify(vmids)) as never;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await ensureBuilt();
  dbPath = tempDbPath();
  server = await startHeadless(
    { DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true', FLEET_HEARTBEAT_INTERVAL_S: '600' },
    { shared: true },
  );
  admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  anonymous = new TestClient(server.local);
  operatorToken = await tokenFor('operator');
  operator = new TestClient(server.local, bearer(operatorToken));
  viewer = new TestClient(server.local, bearer(await tokenFor('viewer')));

  // A host whose heartbeat places 501 (running) and 502 (stopped); 503 runs nowhere.
  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: 'collections' });
  const enrolled = await anonymous.post('/api/agent/enroll', { hostname: 'pve-col', machine_id: 'collections-machine', agent_version: '1.0.0' }, bearer(enrollment.body.token));
  expect(enrolled.status, enrolled.text).toBe(201);
  hostId = enrolled.body.host_id;
  await instance(501, 'web-a', { tags: ['web', 'edge'] });
  await instance(502, 'web-b', { tags: ['web'] });
  await instance(503, 'db-a', { tags: ['db'], stack: 'production' });
  const beat = await new TestClient(server.local, bearer(enrolled.body.host_token)).post('/api/agent/heartbeat', {
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: 'pve-col',
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: [
      { vmid: 501, name: 'web-a', type: 'lxc', status: 'running' },
      { vmid: 502, name: 'web-b', type: 'lxc', status: 'stopped' },
    ],
  });
  expect(beat.status, beat.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

describe('tags through the built server', () => {
  it('are written by operators and administrators, read by everyone signed in, refused to viewers and strangers', async () => {
    expect((await viewer.post('/api/instances', { vmid: 510, name: 'v', state: 'testing', stack: 'development', tags: ['x'] })).status).toBe(403);
    expect((await anonymous.post('/api/instances', { vmid: 510, name: 'v', state: 'testing', stack: 'development', tags: ['x'] })).status).toBe(401);
    const created = await operator.post('/api/instances', { vmid: 510, name: 'op', state: 'testing', stack: 'development', tags: ['Web', 'ops', 'web'] });
    expect(created.status, created.text).toBe(201);
    expect(created.body.tags).toEqual(['ops', 'web']);
    expect((await viewer.put('/api/instances/510', { tags: [] })).status).toBe(403);
    expect((await operator.put('/api/instances/510', { tags: ['ops'] })).body.tags).toEqual(['ops']);
    expect((await viewer.get('/api/instances/510')).body.tags).toEqual(['ops']);
    expect((await viewer.get('/api/instances?tag=web&tag=edge')).body.map((i: { vmid: number }) => i.vmid)).toEqual([501]);
    expect((await anonymous.get('/api/instances?tag=web')).status).toBe(401);
    expect((await viewer.get('/api/instances?tag=no%20tag')).status).toBe(400);
    expect((await viewer.get('/api/instances?guest_status=running')).body.map((i: { vmid: number }) => i.vmid)).toEqual([501]);
    expect((await admin.delete('/api/instances/510')).status).toBe(204);
  });
});

describe('POST /api/instances/bulk through the built server', () => {
  it('is for operators and administrators: 403 for a viewer, 401 without a session, and changes nothing then', async () => {
    const body = { vmids: [501], add_tags: ['nope'] };
    expect((await viewer.post('/api/instances/bulk', body)).status).toBe(403);
    expect((await anonymous.post('/api/instances/bulk', body)).status).toBe(401);
    // A browser session needs its Origin, as every management write.
    expect((await admin.post('/api/instances/bulk', body, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await viewer.get('/api/instances/501')).body.tags).toEqual(['edge', 'web']);
    const res = await operator.post('/api/instances/bulk', { vmids: [501, 502], add_tags: ['blue'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ updated: 2 });
    expect((await admin.post('/api/instances/bulk', { vmids: [501, 502], remove_tags: ['blue'] })).body).toEqual({ updated: 2 });
  });

  it('answers 400 naming the vmid and field, and leaves every instance as it was', async () => {
    const before = (await viewer.get('/api/instances')).body;
    const unknown = await operator.post('/api/instances/bulk', { vmids: [501, 4040], set: { state: 'degraded' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ errors: [{ field: 'vmids', vmid: 4040, message: 'vmid 4040: no such instance' }] });
    await admin.put('/api/instances/503', { tags: Array.from({ length: 16 }, (_, i) => `t${i}`) });
    const full = await operator.post('/api/instances/bulk', { vmids: [501, 503], set: { state: 'degraded' }, add_tags: ['one-more'] });
    expect(full.status).toBe(400);
    expect(full.body).toEqual({ errors: [{ field: 'tags', vmid: 503, message: 'vmid 503: must hold at most 16 tags' }] });
    await admin.put('/api/instances/503', { tags: ['db'] });
    const after = (await viewer.get('/api/instances')).body;
    expect(after.map((i: { vmid: number; state: string; tags: string[] }) => [i.vmid, i.state, i.tags])).toEqual(
      before.map((i: { vmid: number; state: string; tags: string[] }) => [i.vmid, i.state, i.tags]),
    );
  });

  it('never answers a bad body with a 500', async () => {
    const bodies: [unknown, number][] = [
      ['{"vmids": [', 400],
      [{ vmids: Array.from({ length: 100_000 }, (_, i) => i + 1), set: { state: 'deployed' } }, 400],
      [{ vmids: [501], add_tags: Array.from({ length: 50_000 }, (_, i) => `t${i}`) }, 400],
      [{ vmids: [501], set: JSON.parse('['.repeat(2000) + ']'.repeat(2000)) }, 400],
      [{ vmids: [501], set: { state: null } }, 400],
      [null, 400],
      [{ vmids: [501], add_tags: ['x'.repeat(2_000_000)] }, 413],
    ];
    for (const [body, status] of bodies) {
      const res = await operator.post('/api/instances/bulk', body);
      expect(res.status, res.text.slice(0, 200)).toBe(status);
    }
    expect((await anonymous.get('/api/health')).status).toBe(200);
  });

  it('stays consistent when fired in parallel: every edit whole, each history entry following the one before', async () => {
    const vmids = Array.from({ length: 60 }, (_, i) => 600 + i);
    for (const vmid of vmids) await instance(vmid, `par-${vmid}`);
    const path = '/api/instances/bulk';
    const edits = [
      ...Array.from({ length: 10 }, (_, i) => ({ vmids, add_tags: [`p${i}`], set: { state: i % 2 ? 'deployed' : 'degraded' } })),
      // One edit that must fail whole: its last vmid does not exist.
      { vmids: [...vmids, 9999], add_tags: ['never'], set: { argus: 1 } },
    ];
    const results = await heldPosts(server.local, path, bearer(operatorToken), edits);
    expect(results.map((r) => r.status)).toEqual([...Array(10).fill(200), 400]);
    for (const r of results.slice(0, 10)) expect(r.body).toEqual({ updated: 60 });
    const listed = (await viewer.get('/api/instances?tag=p0')).body as Array<{ vmid: number; tags: string[]; argus: number }>;
    expect(listed).toHaveLength(60);
    for (const i of listed) {
      expect(i.tags).toEqual(Array.from({ length: 10 }, (_, n) => `p${n}`));
      expect(i.argus).toBe(0);
    }
    const rows = historyRows(vmids);
    for (const vmid of vmids) {
      const tags = rows.filter((r) => r.vmid === vmid && r.field === 'tags');
      expect(tags).toHaveLength(10);
      // A chain: each edit read what the one before it wrote.
      tags.forEach((row, n) => expect(row.old_value).toBe(n === 0 ? '' : tags[n - 1]!.new_value));
      expect(rows.filter((r) => r.vmid === vmid && r.field === 'argus')).toEqual([]);
    }
  });

  // One retry: a bound on wall time, which a loaded CI machine's scheduling alone can overrun once (test/README.md).
  it('the largest edit (1,000 instances, one transaction) answers while /api/health keeps answering within a second', { retry: 1, timeout: 60_000 }, async () => {
    const vmids = Array.from({ length: 1000 }, (_, i) => 20_000 + i);
    for (let i = 0; i < vmids.length; i += 50) {
      const made = await Promise.all(vmids.slice(i, i + 50).map((vmid) => operator.post('/api/instances', { vmid, name: `bulk-${vmid}`, state: 'testing', stack: 'development', tags: ['bulk'] })));
      for (const res of made) expect([201, 409], res.text).toContain(res.status);
    }
    // Tags of this attempt's own: on a retry the instances already carry the first attempt's.
    const run = Date.now().toString(36);
    const [a, b, c] = ['a', 'b', 'c'].map((t) => `${t}-${run}`);
    const polled = await whileHealthPolled(anonymous, () =>
      Promise.all([{ add_tags: [a], set: { state: 'deployed' } }, { add_tags: [b], set: { argus: 1 } }, { add_tags: [c], remove_tags: ['bulk'] }].map((change) => operator.post('/api/instances/bulk', { vmids, ...change }))),
    );
    for (const res of polled.result) expect(res.body, res.text).toEqual({ updated: 1000 });
    const listed = (await viewer.get(`/api/instances?tag=${a}`)).body as Array<{ state: string; argus: number; tags: string[] }>;
    expect(listed.map((i) => [i.state, i.argus, i.tags.filter((t) => t === 'bulk' || t.endsWith(run))])).toEqual(vmids.map(() => ['deployed', 1, [a, b, c]]));
    expect(polled.health.length).toBeGreaterThan(0);
    expect(polled.slowest, healthTimes(polled, 'the edits')).toBeLessThan(1_000);
  });
});

describe('collections through the built server', () => {
  let id: number;

  it('are made, changed and deleted by operators and administrators only', async () => {
    const body = { name: 'Web tier', description: 'web guests', filter: { tags: ['web'] } };
    expect((await viewer.post('/api/collections', body)).status).toBe(403);
    expect((await anonymous.post('/api/collections', body)).status).toBe(401);
    const made = await operator.post('/api/collections', body);
    expect(made.status, made.text).toBe(201);
    expect(made.body).toEqual({ id: expect.any(Number), name: 'Web tier', description: 'web guests', filter: { tags: ['web'] }, count: 2 });
    id = made.body.id;
    expect((await admin.post('/api/collections', { name: 'WEB TIER' })).body).toEqual({ error: 'a collection of that name already exists' });
    expect((await viewer.put(`/api/collections/${id}`, body)).status).toBe(403);
    expect((await anonymous.put(`/api/collections/${id}`, body)).status).toBe(401);
    const changed = await admin.put(`/api/collections/${id}`, { ...body, filter: { tags: ['web'], guest_status: 'running' } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.count).toBe(1);
    expect((await viewer.delete(`/api/collections/${id}`)).status).toBe(403);
    expect((await anonymous.delete(`/api/collections/${id}`)).status).toBe(401);
  });

  it('are read by every role: the list and one collection (content.read), and what it matches (fleet.read)', async () => {
    const list = await viewer.get('/api/collections');
    expect(list.status).toBe(200);
    expect(list.body).toEqual([{ id, name: 'Web tier', description: 'web guests', filter: { tags: ['web'], guest_status: 'running' }, count: 1 }]);
    expect((await viewer.get(`/api/collections/${id}`)).body.count).toBe(1);
    const matched = await viewer.get(`/api/collections/${id}/instances`);
    expect(matched.status).toBe(200);
    expect(matched.body).toEqual([expect.objectContaining({ vmid: 501, host: { id: hostId, name: 'pve-col' }, guest_status: 'running' })]);
    for (const path of ['/api/collections', `/api/collections/${id}`, `/api/collections/${id}/instances`]) {
      expect((await anonymous.get(path)).status, path).toBe(401);
    }
  });

  it('match by host: the host’s guests with its id, the rest with none', async () => {
    const onHost = await admin.post('/api/collections', { name: 'on pve-col', filter: { host_id: hostId } });
    expect(onHost.body.count).toBe(2);
    const nowhere = await admin.post('/api/collections', { name: 'nowhere', filter: { host_id: 'none', stack: 'production' } });
    expect((await viewer.get(`/api/collections/${nowhere.body.id}/instances`)).body.map((i: { vmid: number }) => i.vmid)).toEqual([503]);
    for (const c of [onHost, nowhere]) expect((await admin.delete(`/api/collections/${c.body.id}`)).status).toBe(204);
  });

  it('answer 400 naming the field, 404 for one that does not exist, and never a 500', async () => {
    const bad = await operator.post('/api/collections', { name: 'x', filter: { tag: 'web' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ field: 'filter.tag', message: 'is not a filter: use search, state, stack, host_id, tags, guest_status' }]);
    for (const body of ['{', null, [], { name: 'x'.repeat(101) }, { name: 'x', filter: JSON.parse('{"a":'.repeat(1000) + '1' + '}'.repeat(1000)) }]) {
      expect((await operator.post('/api/collections', body)).status).toBe(400);
    }
    for (const res of [await viewer.get('/api/collections/9999'), await viewer.get('/api/collections/9999/instances'), await operator.put('/api/collections/9999', { name: 'x' }), await operator.delete('/api/collections/9999')]) {
      expect(res.status).toBe(404);
    }
    expect((await viewer.get('/api/collections/abc')).status).toBe(400);
  });

  it('are deleted with 204 by an operator', async () => {
    expect((await operator.delete(`/api/collections/${id}`)).status).toBe(204);
    expect((await viewer.get('/api/collections')).body).toEqual([]);
  });

  it('keep their names unique when created in parallel: one 201, the rest 409', async () => {
    const results = await heldPosts(server.local, '/api/collections', bearer(operatorToken), Array.from({ length: 8 }, (_, i) => ({ name: i % 2 ? 'Race' : 'race' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(7).fill(409)]);
  });
});
