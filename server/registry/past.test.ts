// Time travel (PRODUCT.md "Fleet health", issue 39): GET /api/instances?at= and /api/instances/:vmid?at=
// rebuild the registry as it was from history, in process with a hand-moved clock so each moment is
// exact. test/time-travel.test.ts holds the same rules against the built server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, type ManualClock } from '../../test/helpers/clock.js';
import type { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';

let server: TestServer;
let api: TestClient;
let clock: ManualClock;

beforeEach(async () => {
  clock = manualClock(Date.parse('2026-11-22T10:00:00.000Z'));
  server = await startServer({ clock });
  api = server.client;
});
afterEach(() => server.stop());

const at = (iso: string, query = '') => api.get(`/api/instances?at=${encodeURIComponent(iso)}${query}`);
const rows = async (iso: string, query = '') => {
  const res = await at(iso, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Array<Record<string, unknown>>;
};
const ok = async (res: Promise<{ status: number; body: unknown }>, status = 200) => {
  const answer = await res;
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return answer.body as Record<string, unknown>;
};
const move = (iso: string) => clock.set(Date.parse(iso));

describe('GET /api/instances?at=', () => {
  it('shows each field as it was at each moment, updated_at then, and null for what hosts report', async () => {
    await ok(api.post('/api/instances', { vmid: 101, name: 'web', state: 'testing', stack: 'development', atlas: 1 }), 201);
    move('2026-11-22T10:01:00.250Z');
    await ok(api.put('/api/instances/101', { name: 'web-1', state: 'deployed' }));
    move('2026-11-22T10:02:00.500Z');
    await ok(api.put('/api/instances/101', { name: 'web-2', atlas: 0, tailscale_ip: '100.64.0.9' }));
    move('2026-11-22T10:03:00.000Z');

    const base = { vmid: 101, stack: 'development', argus: 0, semaphore: 0, patchmon: 0, tailscale: 0, andromeda: 0, hardware_acceleration: 0, tags: [], created_at: '2026-11-22T10:00:00Z', host: null, guest_status: null, tailscale_ipv6: null, current_vmid: 101 };
    expect(await rows('2026-11-22T10:00:30Z')).toEqual([{ ...base, name: 'web', state: 'testing', tailscale_ip: '', atlas: 1, updated_at: '2026-11-22T10:00:00Z' }]);
    expect(await rows('2026-11-22T10:01:30Z')).toEqual([{ ...base, name: 'web-1', state: 'deployed', tailscale_ip: '', atlas: 1, updated_at: '2026-11-22T10:01:00Z' }]);
    expect(await rows('2026-11-22T10:02:30Z')).toEqual([{ ...base, name: 'web-2', state: 'deployed', tailscale_ip: '100.64.0.9', atlas: 0, updated_at: '2026-11-22T10:02:00Z' }]);
    // To the millisecond: a change is in the registry from its own instant on.
    expect((await rows('2026-11-22T10:01:00.249Z'))[0]!.name).toBe('web');
    expect((await rows('2026-11-22T10:01:00.250Z'))[0]!.name).toBe('web-1');
    // Before its creation it is not there; an instant given with an offset is the same instant.
    expect(await rows('2026-11-22T09:59:59.999Z')).toEqual([]);
    expect((await rows('2026-11-22T12:00:30+02:00'))[0]!.name).toBe('web');
  });

  it('an instance created within the second of `at` but after it is not there yet', async () => {
    move('2026-11-22T10:00:00.700Z');
    await ok(api.post('/api/instances', { vmid: 101, name: 'web', state: 'testing', stack: 'development' }), 201);
    move('2026-11-22T10:01:00Z');
    expect(await rows('2026-11-22T10:00:00.300Z')).toEqual([]);
    expect((await rows('2026-11-22T10:00:00.700Z')).map((r) => r.vmid)).toEqual([101]);
  });

  it('a deleted instance is there before its deletion, as it was, and not after; a reused vmid is another instance', async () => {
    await ok(api.post('/api/instances', { vmid: 200, name: 'old-db', state: 'deployed', stack: 'development' }), 201);
    move('2026-11-22T10:01:00Z');
    await ok(api.put('/api/instances/200', { name: 'old-db-renamed' }));
    move('2026-11-22T10:02:00Z');
    expect((await api.delete('/api/instances/200')).status).toBe(204);
    move('2026-11-22T10:03:00Z');
    await ok(api.post('/api/instances', { vmid: 200, name: 'new-db', state: 'testing', stack: 'production' }), 201);
    move('2026-11-22T10:04:00Z');

    const seen = async (iso: string) => (await rows(iso)).map((r) => [r.vmid, r.name, r.state, r.stack, r.current_vmid]);
    expect(await seen('2026-11-22T10:00:30Z')).toEqual([[200, 'old-db', 'deployed', 'development', null]]);
    expect(await seen('2026-11-22T10:01:30Z')).toEqual([[200, 'old-db-renamed', 'deployed', 'development', null]]);
    expect(await seen('2026-11-22T10:02:30Z')).toEqual([]);
    expect(await seen('2026-11-22T10:03:30Z')).toEqual([[200, 'new-db', 'testing', 'production', 200]]);
    // The new instance's own history is its own: the old one's is not shown as its timeline.
    expect((await api.get('/api/instances/200/history')).body.map((h: { field: string }) => h.field)).toEqual(['created']);
    expect(await ok(api.get('/api/instances/200?at=2026-11-22T10:01:30Z'))).toMatchObject({ name: 'old-db-renamed', current_vmid: null, deploy: null });
    expect(await ok(api.get('/api/instances/200?at=2026-11-22T10:03:30Z'))).toMatchObject({ name: 'new-db', current_vmid: 200 });
    expect(await ok(api.get('/api/instances/200?at=2026-11-22T10:02:30Z'), 404)).toEqual({ error: 'no instance had this vmid then' });
  });

  it('follows a vmid change: the instance had its old vmid then, and /:vmid?at= finds it by that vmid', async () => {
    await ok(api.post('/api/instances', { vmid: 300, name: 'app', state: 'deployed', stack: 'development' }), 201);
    await ok(api.post('/api/instances', { vmid: 301, name: 'other', state: 'deployed', stack: 'development' }), 201);
    move('2026-11-22T10:01:00Z');
    await ok(api.put('/api/instances/300', { vmid: 310 }));
    move('2026-11-22T10:02:00Z');
    expect((await rows('2026-11-22T10:00:30Z')).map((r) => [r.vmid, r.current_vmid])).toEqual([[300, 310], [301, 301]]);
    expect(await ok(api.get('/api/instances/300?at=2026-11-22T10:00:30Z'))).toMatchObject({ vmid: 300, name: 'app', current_vmid: 310 });
    expect(await ok(api.get('/api/instances/310?at=2026-11-22T10:00:30Z'), 404)).toEqual({ error: 'no instance had this vmid then' });
    expect(await ok(api.get('/api/instances/310?at=2026-11-22T10:01:30Z'))).toMatchObject({ vmid: 310, name: 'app' });
  });

  it('filters and sorts by the values then, as the plain list does by the values now', async () => {
    await ok(api.post('/api/instances', { vmid: 401, name: 'alpha', state: 'deployed', stack: 'production' }), 201);
    await ok(api.post('/api/instances', { vmid: 402, name: 'beta', state: 'testing', stack: 'development' }), 201);
    await ok(api.post('/api/instances', { vmid: 403, name: 'gamma_1', state: 'testing', stack: 'development' }), 201);
    move('2026-11-22T10:01:00Z');
    await ok(api.put('/api/instances/401', { name: 'zeta', state: 'degraded' }));
    await ok(api.put('/api/instances/402', { state: 'deployed', stack: 'production' }));
    move('2026-11-22T10:02:00Z');
    const then = '2026-11-22T10:00:30Z';
    const vmids = async (query: string) => (await rows(then, query)).map((r) => r.vmid);
    expect(await vmids('&state=deployed')).toEqual([401]);
    expect(await vmids('&stack=development')).toEqual([402, 403]);
    expect(await vmids('&search=alp')).toEqual([401]);
    expect(await vmids('&search=zeta')).toEqual([]);
    // `_` is a character, not a wildcard, as in the plain list.
    expect(await vmids('&search=a_1')).toEqual([403]);
    expect(await vmids('&sort=name&order=desc')).toEqual([403, 402, 401]);
    expect((await api.get('/api/instances?sort=name&order=desc')).body.map((r: { vmid: number }) => r.vmid)).toEqual([401, 403, 402]);
    expect(await vmids('&state=testing&stack=development&sort=vmid&order=desc')).toEqual([403, 402]);
  });

  it('rebuilds tags and filters by the tags then', async () => {
    await ok(api.post('/api/instances', { vmid: 601, name: 'edge', state: 'deployed', stack: 'development', tags: ['web'] }), 201);
    move('2026-11-22T10:01:00Z');
    await ok(api.put('/api/instances/601', { tags: ['db', 'edge'] }));
    move('2026-11-22T10:02:00Z');
    expect((await rows('2026-11-22T10:00:30Z')).map((r) => [r.vmid, r.tags])).toEqual([[601, ['web']]]);
    expect((await rows('2026-11-22T10:01:30Z')).map((r) => [r.vmid, r.tags])).toEqual([[601, ['db', 'edge']]]);
    expect((await rows('2026-11-22T10:00:30Z', '&tag=web')).map((r) => r.vmid)).toEqual([601]);
    expect((await rows('2026-11-22T10:00:30Z', '&tag=db')).map((r) => r.vmid)).toEqual([]);
    expect((await rows('2026-11-22T10:01:30Z', '&tag=db&tag=edge')).map((r) => r.vmid)).toEqual([601]);
  });

  it('an `at` not in the past is the registry now, with what hosts report; empty is now too', async () => {
    await ok(api.post('/api/instances', { vmid: 101, name: 'web', state: 'testing', stack: 'development' }), 201);
    const now = (await api.get('/api/instances')).body;
    expect(now[0]).not.toHaveProperty('current_vmid');
    expect(await rows('2099-01-01T00:00:00Z')).toEqual(now);
    expect(await rows('')).toEqual(now);
    expect(await ok(api.get('/api/instances/101?at=2099-01-01T00:00:00Z'))).toEqual((await api.get('/api/instances/101')).body);
  });

  it('refuses an `at` that is no instant with 400 naming it, and host_id beside it', async () => {
    const rule = 'must be an ISO 8601 date and time with its zone, e.g. 2026-11-22T10:15:00Z (a date alone is its midnight UTC)';
    for (const bad of ['yesterday', '2026-11-22T10:00:00', '2026-02-30T00:00:00Z', '1700000000']) {
      expect(await ok(at(bad), 400)).toEqual({ errors: [{ field: 'at', message: rule }] });
      expect(await ok(api.get(`/api/instances/101?at=${bad}`), 400)).toEqual({ errors: [{ field: 'at', message: rule }] });
    }
    expect(await ok(at('2026-11-22T10:00:00Z', '&host_id=none'), 400)).toEqual({
      errors: [{ field: 'host_id', message: 'cannot be combined with at: where guests ran is not kept in history' }],
    });
    expect(await ok(at('2026-11-22T10:00:00Z', '&guest_status=running'), 400)).toEqual({
      errors: [{ field: 'guest_status', message: 'cannot be combined with at: guest statuses are not kept in history' }],
    });
  });

  it('an import replaces the past with the backup’s: instances deleted before it are forgotten', async () => {
    await ok(api.post('/api/instances', { vmid: 500, name: 'gone', state: 'deployed', stack: 'development' }), 201);
    move('2026-11-22T10:01:00Z');
    expect((await api.delete('/api/instances/500')).status).toBe(204);
    expect((await rows('2026-11-22T10:00:30Z')).map((r) => r.vmid)).toEqual([500]);
    move('2026-11-22T10:02:00Z');
    const doc = { version: 3, instances: [{ vmid: 501, name: 'kept', state: 'deployed', stack: 'development', created_at: '2026-11-22T09:00:00Z', updated_at: '2026-11-22T09:00:00Z' }] };
    await ok(api.post('/api/import', doc));
    move('2026-11-22T10:03:00Z');
    expect((await rows('2026-11-22T10:00:30Z')).map((r) => r.vmid)).toEqual([501]);
  });
});
