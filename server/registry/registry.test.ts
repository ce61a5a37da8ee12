import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, type ManualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import type { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';

let server: TestServer;
let api: TestClient;
let clock: ManualClock;

beforeEach(async () => {
  clock = manualClock();
  server = await startServer({ clock });
  api = server.client;
});
afterEach(() => server.stop());

async function create(overrides: Record<string, unknown> = {}) {
  const res = await api.post('/api/instances', buildInstance(overrides));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const names = (body: Array<{ name: string }>) => body.map((i) => i.name);

describe('create', () => {
  it('returns 201 with the whole instance, flags 0 and tailscale_ip "" by default, one-second timestamps', async () => {
    const res = await api.post('/api/instances', { vmid: 101, name: 'web', state: 'deployed', stack: 'production' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      vmid: 101,
      name: 'web',
      state: 'deployed',
      stack: 'production',
      tailscale_ip: '',
      atlas: 0,
      argus: 0,
      semaphore: 0,
      patchmon: 0,
      tailscale: 0,
      andromeda: 0,
      hardware_acceleration: 0,
      tags: [],
      created_at: '2026-11-22T10:00:00Z',
      updated_at: '2026-11-22T10:00:00Z',
      // Where it runs: no agent reports vmid 101 (PRODUCT.md "Guest control through agents").
      host: null,
      guest_status: null,
      // No tailscale_sync run has matched a device to it (the IPv6 address is kept beside the registry).
      tailscale_ipv6: null,
    });
    expect((await api.get('/api/instances/101')).body).toEqual({ ...res.body, deploy: null });
  });

  it('keeps every flag and the address that are given', async () => {
    const flags = { atlas: 1, argus: 1, semaphore: 1, patchmon: 1, tailscale: 1, andromeda: 1, hardware_acceleration: 1 };
    const body = await create({ ...flags, tailscale_ip: '100.64.0.7' });
    expect(body).toMatchObject({ ...flags, tailscale_ip: '100.64.0.7' });
  });

  it.each(['vmid', 'name', 'state', 'stack'])('rejects a body without %s with 400 and an errors array', async (field) => {
    const body = buildInstance();
    delete body[field];
    const res = await api.post('/api/instances', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ field, message: 'is required' }] });
  });

  it.each(['0', '-1', '1.5', '"7"', '"abc"', 'true', 'null', '1e400', String(2 ** 60)])('rejects vmid %s', async (vmid) => {
    const res = await api.post('/api/instances', `{"vmid":${vmid},"name":"x","state":"deployed","stack":"development"}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'vmid', message: 'must be a positive integer' }]);
  });

  it.each(['running', 'Deployed', '', 1])('rejects state %j', async (state) => {
    const res = await api.post('/api/instances', buildInstance({ state }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'state', message: 'must be one of deployed, testing, degraded' }]);
  });

  it('accepts each state and each stack', async () => {
    for (const state of ['deployed', 'testing', 'degraded']) {
      for (const stack of ['production', 'development']) await create({ state, stack });
    }
    expect((await api.get('/api/instances')).body).toHaveLength(6);
  });

  it.each(['staging', 'Production', ''])('rejects stack %j', async (stack) => {
    const res = await api.post('/api/instances', buildInstance({ stack }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'stack', message: 'must be one of production, development' }]);
  });

  it.each(['1.2.3', '256.1.1.1', '01.2.3.4', '1.2.3.4 ', '::1', 'host', 7])('rejects tailscale_ip %j', async (ip) => {
    const res = await api.post('/api/instances', buildInstance({ tailscale_ip: ip }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'tailscale_ip', message: 'must be an IPv4 address or empty' }]);
  });

  it.each(['atlas', 'argus', 'semaphore', 'patchmon', 'tailscale', 'andromeda', 'hardware_acceleration'])(
    'rejects flag %s outside 0/1',
    async (flag) => {
      for (const value of [2, -1, '1', true, 0.5]) {
        const res = await api.post('/api/instances', buildInstance({ [flag]: value }));
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field: flag, message: 'must be 0 or 1' }]);
      }
    },
  );

  it('reports every invalid field at once and ignores unknown fields', async () => {
    const res = await api.post('/api/instances', { vmid: -3, name: '', state: 'x', stack: 'y', colour: 'blue' });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['vmid', 'name', 'state', 'stack']);
    const ok = await api.post('/api/instances', buildInstance({ colour: 'blue' }));
    expect(ok.status).toBe(201);
    expect(ok.body).not.toHaveProperty('colour');
  });

  it('gives 409 for a vmid that already exists and writes nothing', async () => {
    await create({ vmid: 5, name: 'first' });
    const res = await api.post('/api/instances', buildInstance({ vmid: 5, name: 'second' }));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'vmid already exists' });
    expect(names((await api.get('/api/instances')).body)).toEqual(['first']);
  });

  it('writes the created history entry with the instance', async () => {
    await create({ vmid: 7 });
    const res = await api.get('/api/instances/7/history');
    expect(res.body).toEqual([
      { id: 1, vmid: 7, field: 'created', old_value: null, new_value: null, changed_at: '2026-11-22T10:00:00.000Z', changed_by: 'admin' },
    ]);
  });
});

describe('bad request bodies never give 500', () => {
  it.each([
    ['malformed JSON', '{"vmid": 1,', 400],
    ['a JSON array', '[1,2]', 400],
    ['a JSON string', '"instance"', 400],
    ['a JSON number', '42', 400],
    ['null', 'null', 400],
    ['a huge number', '{"vmid": 1e999, "name":"x","state":"deployed","stack":"development"}', 400],
    ['a long digit string', `{"vmid": ${'9'.repeat(400)}, "name":"x","state":"deployed","stack":"development"}`, 400],
    ['a string vmid', '{"vmid": "12", "name":"x","state":"deployed","stack":"development"}', 400],
    ['nested objects', '{"vmid": {"a":1}, "name":["x"],"state":{},"stack":[]}', 400],
  ])('%s → %s', async (_label, body, status) => {
    for (const [method, path] of [['POST', '/api/instances'], ['PUT', '/api/instances/1']] as const) {
      if (method === 'PUT') await api.post('/api/instances', buildInstance({ vmid: 1 }));
      const res = await api.request(method, path, body);
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/json');
    }
  });

  it('an empty body creates nothing (400) and updates nothing (200, unchanged)', async () => {
    expect((await api.post('/api/instances', '')).status).toBe(400);
    const created = await create({ vmid: 2 });
    const res = await api.put('/api/instances/2', '');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it('a body over 1 MiB is 413', async () => {
    const res = await api.post('/api/instances', JSON.stringify({ ...buildInstance(), name: 'x'.repeat(1_100_000) }));
    expect(res.status).toBe(413);
  });

  it('a body sent as text/plain is a validation error, not a crash', async () => {
    const res = await api.post('/api/instances', JSON.stringify(buildInstance()), { 'content-type': 'text/plain' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'must be a JSON object' }]);
  });
});

describe('path ids', () => {
  it.each(['abc', '1.5', '1e3', '0x10', '99999999999999999999', ' 1'])('GET/PUT/DELETE/history with vmid %j is 400 invalid vmid', async (vmid) => {
    const path = `/api/instances/${encodeURIComponent(vmid)}`;
    for (const res of [await api.get(path), await api.put(path, { name: 'x' }), await api.delete(path), await api.get(`${path}/history`)]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid vmid' });
    }
  });

  it('an unknown vmid is 404 instance not found on every route', async () => {
    for (const res of [
      await api.get('/api/instances/404'),
      await api.put('/api/instances/404', { name: 'x' }),
      await api.delete('/api/instances/404'),
      await api.get('/api/instances/404/history'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'instance not found' });
    }
  });
});

describe('update', () => {
  it('merges a partial body over the stored instance and keeps the rest', async () => {
    await create({ vmid: 10, name: 'db', state: 'testing', atlas: 1, tailscale_ip: '100.64.0.1' });
    clock.advance(2000);
    const res = await api.put('/api/instances/10', { state: 'deployed' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ vmid: 10, name: 'db', state: 'deployed', atlas: 1, tailscale_ip: '100.64.0.1' });
    expect(res.body.created_at).toBe('2026-11-22T10:00:00Z');
    expect(res.body.updated_at).toBe('2026-11-22T10:00:02Z');
  });

  it('validates the merged result', async () => {
    await create({ vmid: 11 });
    const res = await api.put('/api/instances/11', { state: 'gone', argus: 3 });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['state', 'argus']);
    expect((await api.get('/api/instances/11')).body.state).toBe('deployed');
  });

  it('writes one history entry per changed field, old and new values as text, newest first', async () => {
    await create({ vmid: 12, name: 'old' });
    clock.advance(1500);
    await api.put('/api/instances/12', { name: 'new', atlas: 1, state: 'deployed' });
    const history = (await api.get('/api/instances/12/history')).body;
    expect(history).toEqual([
      { id: 3, vmid: 12, field: 'atlas', old_value: '0', new_value: '1', changed_at: '2026-11-22T10:00:01.500Z', changed_by: 'admin' },
      { id: 2, vmid: 12, field: 'name', old_value: 'old', new_value: 'new', changed_at: '2026-11-22T10:00:01.500Z', changed_by: 'admin' },
      { id: 1, vmid: 12, field: 'created', old_value: null, new_value: null, changed_at: '2026-11-22T10:00:00.000Z', changed_by: 'admin' },
    ]);
  });

  it('an update that changes nothing writes no history and keeps updated_at', async () => {
    const created = await create({ vmid: 13, name: 'same' });
    clock.advance(5000);
    const res = await api.put('/api/instances/13', { name: 'same', colour: 'red' });
    expect(res.body.updated_at).toBe(created.updated_at);
    expect((await api.get('/api/instances/13/history')).body).toHaveLength(1);
  });

  it('changes the vmid; the instance keeps its history under the new number', async () => {
    await create({ vmid: 20, name: 'mover' });
    await api.put('/api/instances/20', { argus: 1 });
    const res = await api.put('/api/instances/20', { vmid: 21 });
    expect(res.status).toBe(200);
    expect(res.body.vmid).toBe(21);
    expect((await api.get('/api/instances/20')).status).toBe(404);
    const history = (await api.get('/api/instances/21/history')).body;
    expect(history.map((h: { field: string }) => h.field)).toEqual(['vmid', 'argus', 'created']);
    expect(history[0]).toMatchObject({ vmid: 21, old_value: '20', new_value: '21' });
    expect(history.every((h: { vmid: number }) => h.vmid === 21)).toBe(true);
  });

  it('gives 409 when the new vmid collides and changes nothing', async () => {
    await create({ vmid: 30, name: 'a' });
    await create({ vmid: 31, name: 'b' });
    const res = await api.put('/api/instances/30', { vmid: 31, name: 'renamed' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'vmid already exists' });
    expect((await api.get('/api/instances/30')).body.name).toBe('a');
    expect((await api.get('/api/instances/30/history')).body).toHaveLength(1);
  });
});

describe('delete', () => {
  it('removes a development instance with 204 and its history with it', async () => {
    await create({ vmid: 40, stack: 'development' });
    const res = await api.delete('/api/instances/40');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get('/api/instances/40')).status).toBe(404);
    expect(server.db.prepare('SELECT count(*) AS n FROM instance_history').get()).toEqual({ n: 0 });
  });

  it('rejects deleting a production instance with 422 and keeps it', async () => {
    await create({ vmid: 41, stack: 'production' });
    const res = await api.delete('/api/instances/41');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'production instances cannot be deleted; change the stack to development first' });
    expect((await api.get('/api/instances/41')).status).toBe(200);
    await api.put('/api/instances/41', { stack: 'development' });
    expect((await api.delete('/api/instances/41')).status).toBe(204);
  });
});

describe('one transaction per write: the change, its history and its request audit row', () => {
  const requestRows = () =>
    server.db
      .prepare<[], { target: string | null; detail: string }>("SELECT target, detail FROM audit_log WHERE action = 'request' ORDER BY id")
      .all()
      .map((r) => ({ target: r.target, ...JSON.parse(r.detail) }));

  it('create, update and delete each leave one request audit row with the status sent', async () => {
    await api.post('/api/instances', buildInstance({ vmid: 601, stack: 'development' }));
    await api.put('/api/instances/601', { state: 'testing' });
    await api.put('/api/instances/601', { state: 'testing' }); // no change: still a successful write
    await api.delete('/api/instances/601');
    await api.delete('/api/instances/601'); // 404: no row
    expect(requestRows()).toEqual([
      { target: 'instance 601', method: 'POST', path: '/api/instances', status: 201 },
      { target: 'instance 601', method: 'PUT', path: '/api/instances/601', status: 200, fields: ['state'] },
      { target: 'instance 601', method: 'PUT', path: '/api/instances/601', status: 200, fields: [] },
      { target: 'instance 601', method: 'DELETE', path: '/api/instances/601', status: 204 },
    ]);
  });

  it('when the audit row cannot be written, the change is not made either', async () => {
    await api.post('/api/instances', buildInstance({ vmid: 602, stack: 'development', state: 'deployed' }));
    server.db.exec("CREATE TEMP TRIGGER audit_full BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit log unavailable'); END");
    expect((await api.post('/api/instances', buildInstance({ vmid: 603 }))).status).toBe(500);
    expect((await api.put('/api/instances/602', { state: 'testing' })).status).toBe(500);
    expect((await api.delete('/api/instances/602')).status).toBe(500);
    server.db.exec('DROP TRIGGER audit_full');
    expect((await api.get('/api/instances/603')).status).toBe(404);
    expect((await api.get('/api/instances/602')).body.state).toBe('deployed');
    expect((await api.get('/api/instances/602/history')).body.map((h: { field: string }) => h.field)).toEqual(['created']);
  });
});

describe('list', () => {
  beforeEach(async () => {
    await create({ vmid: 300, name: 'Charlie', state: 'deployed', stack: 'production' });
    await create({ vmid: 120, name: 'alpha', state: 'testing', stack: 'development' });
    await create({ vmid: 210, name: 'bravo-prod', state: 'degraded', stack: 'production' });
    await create({ vmid: 999, name: 'delta', state: 'deployed', stack: 'development' });
  });

  it('sorts by name (case-insensitive) ascending by default', async () => {
    expect(names((await api.get('/api/instances')).body)).toEqual(['alpha', 'bravo-prod', 'Charlie', 'delta']);
  });

  it('searches name, vmid and stack partially', async () => {
    expect(names((await api.get('/api/instances?search=ha')).body)).toEqual(['alpha', 'Charlie']);
    expect(names((await api.get('/api/instances?search=21')).body)).toEqual(['bravo-prod']);
    expect(names((await api.get('/api/instances?search=99')).body)).toEqual(['delta']);
    expect(names((await api.get('/api/instances?search=product')).body)).toEqual(['bravo-prod', 'Charlie']);
    expect(names((await api.get('/api/instances?search=zzz')).body)).toEqual([]);
  });

  it('treats % and _ in search as plain characters', async () => {
    expect((await api.get('/api/instances?search=%25')).body).toEqual([]);
    expect((await api.get('/api/instances?search=_')).body).toEqual([]);
  });

  it('filters state and stack exactly and combines every filter with AND', async () => {
    expect(names((await api.get('/api/instances?state=deployed')).body)).toEqual(['Charlie', 'delta']);
    expect(names((await api.get('/api/instances?stack=production')).body)).toEqual(['bravo-prod', 'Charlie']);
    expect(names((await api.get('/api/instances?state=deployed&stack=development')).body)).toEqual(['delta']);
    expect(names((await api.get('/api/instances?state=deploy')).body)).toEqual([]);
    expect(names((await api.get('/api/instances?search=a&state=deployed&stack=production')).body)).toEqual(['Charlie']);
    expect(names((await api.get('/api/instances?search=alpha&stack=production')).body)).toEqual([]);
  });

  it.each([
    ['name', ['alpha', 'bravo-prod', 'Charlie', 'delta']],
    ['vmid', ['alpha', 'bravo-prod', 'Charlie', 'delta']],
    ['created_at', ['Charlie', 'alpha', 'bravo-prod', 'delta']],
    ['updated_at', ['Charlie', 'alpha', 'bravo-prod', 'delta']],
    ['nonsense', ['alpha', 'bravo-prod', 'Charlie', 'delta']],
    ['', ['alpha', 'bravo-prod', 'Charlie', 'delta']],
  ])('sort=%s ascending, and reversed only by order=desc', async (sort, expected) => {
    expect(names((await api.get(`/api/instances?sort=${sort}`)).body)).toEqual(expected);
    expect(names((await api.get(`/api/instances?sort=${sort}&order=asc`)).body)).toEqual(expected);
    expect(names((await api.get(`/api/instances?sort=${sort}&order=DESC`)).body)).toEqual(expected);
    expect(names((await api.get(`/api/instances?sort=${sort}&order=descending`)).body)).toEqual(expected);
    expect(names((await api.get(`/api/instances?sort=${sort}&order=desc`)).body)).toEqual([...expected].reverse());
  });

  it('sorts vmid numerically, not as text', async () => {
    await create({ vmid: 5, name: 'zulu' });
    expect((await api.get('/api/instances?sort=vmid')).body.map((i: { vmid: number }) => i.vmid)).toEqual([5, 120, 210, 300, 999]);
  });

  it('orders by the timestamp, then by insertion for rows of the same second', async () => {
    clock.advance(3000);
    await create({ vmid: 1, name: 'later' });
    // All four fixtures share one second; the later row comes after them ascending, first descending.
    expect(names((await api.get('/api/instances?sort=created_at')).body)).toEqual(['Charlie', 'alpha', 'bravo-prod', 'delta', 'later']);
    expect(names((await api.get('/api/instances?sort=created_at&order=desc')).body)).toEqual(['later', 'delta', 'bravo-prod', 'alpha', 'Charlie']);
    clock.advance(3000);
    await api.put('/api/instances/120', { state: 'deployed' });
    expect(names((await api.get('/api/instances?sort=updated_at&order=desc')).body)).toEqual(['alpha', 'later', 'delta', 'bravo-prod', 'Charlie']);
  });

  it('returns the distinct stacks present, sorted', async () => {
    expect((await api.get('/api/instances/stacks')).body).toEqual(['development', 'production']);
    await api.put('/api/instances/300', { stack: 'development' });
    await api.put('/api/instances/210', { stack: 'development' });
    expect((await api.get('/api/instances/stacks')).body).toEqual(['development']);
  });
});

describe('stacks and history on an empty registry', () => {
  it('lists no stacks', async () => {
    expect((await api.get('/api/instances/stacks')).body).toEqual([]);
    expect((await api.get('/api/instances')).body).toEqual([]);
  });
});
