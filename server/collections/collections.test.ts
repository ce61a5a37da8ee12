import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import type { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';

// Collections (PRODUCT.md "Collections, scripts, campaigns and release channels") in process, and the
// backup of tags and collections. test/collections.test.ts runs the routes against the built server, by role.
let server: TestServer;
let api: TestClient;

beforeEach(async () => {
  server = await startServer({ clock: manualClock() });
  api = server.client;
  for (const [vmid, name, state, stack, tags] of [
    [301, 'web-1', 'deployed', 'production', ['web', 'edge']],
    [302, 'web-2', 'testing', 'development', ['web']],
    [303, 'db-1', 'deployed', 'production', ['db']],
  ] as const) {
    expect((await api.post('/api/instances', buildInstance({ vmid, name, state, stack, tags }))).status).toBe(201);
  }
});
afterEach(() => server.stop());

const make = async (body: Record<string, unknown>) => {
  const res = await api.post('/api/collections', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
};

describe('collections', () => {
  it('creates a collection with the instances it matches now counted, and lists them by name', async () => {
    const web = await make({ name: 'Web', description: 'the web tier', filter: { tags: ['WEB'], search: '' } });
    expect(web).toEqual({ id: expect.any(Number), name: 'Web', description: 'the web tier', filter: { tags: ['web'] }, count: 2 });
    const all = await make({ name: 'all' });
    expect(all).toMatchObject({ description: '', filter: {}, count: 3 });
    await make({ name: 'prod web', filter: { tags: ['web'], state: 'deployed', stack: 'production' } });
    expect((await api.get('/api/collections')).body.map((c: { name: string; count: number }) => [c.name, c.count])).toEqual([
      ['all', 3],
      ['prod web', 1],
      ['Web', 2],
    ]);
    // Matched when asked: a new instance tagged web is in "Web" at once.
    await api.post('/api/instances', buildInstance({ vmid: 304, name: 'web-3', tags: ['web'] }));
    expect((await api.get(`/api/collections/${web.id}`)).body.count).toBe(3);
  });

  it('lists the instances a collection matches now, by name; vmidsOf gives their vmids ascending', async () => {
    const web = await make({ name: 'web', filter: { tags: ['web'] } });
    const res = await api.get(`/api/collections/${web.id}/instances`);
    expect(res.status).toBe(200);
    expect(res.body.map((i: { name: string }) => i.name)).toEqual(['web-1', 'web-2']);
    expect(res.body[0]).toMatchObject({ vmid: 301, tags: ['edge', 'web'], host: null });
    expect(server.collections.vmidsOf(web.id)).toEqual([301, 302]);
    expect(() => server.collections.vmidsOf(web.id + 100)).toThrow(expect.objectContaining({ status: 404 }));
  });

  it('matches instances no host reports with host_id none, and none of them with a host id', async () => {
    expect((await make({ name: 'unplaced', filter: { host_id: 'none' } })).count).toBe(3);
    expect((await make({ name: 'on host 7', filter: { host_id: 7 } })).count).toBe(0);
    expect((await make({ name: 'running', filter: { guest_status: 'running' } })).count).toBe(0);
  });

  it('updates a collection whole, and deletes it with 204', async () => {
    const web = await make({ name: 'web', filter: { tags: ['web'] } });
    const res = await api.put(`/api/collections/${web.id}`, { name: 'databases', filter: { tags: ['db'] } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ id: web.id, name: 'databases', description: '', filter: { tags: ['db'] }, count: 1 });
    expect((await api.delete(`/api/collections/${web.id}`)).status).toBe(204);
    expect((await api.get(`/api/collections/${web.id}`)).status).toBe(404);
  });

  it('answers 404 for a collection that does not exist, on every route', async () => {
    for (const res of [
      await api.get('/api/collections/99'),
      await api.get('/api/collections/99/instances'),
      await api.put('/api/collections/99', { name: 'x' }),
      await api.delete('/api/collections/99'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'collection not found' });
    }
    expect((await api.get('/api/collections/x')).status).toBe(400);
  });

  it('keeps names unique whatever their case (409), on create and on rename', async () => {
    await make({ name: 'Web' });
    const other = await make({ name: 'db' });
    expect(await api.post('/api/collections', { name: 'web' })).toMatchObject({ status: 409, body: { error: 'a collection of that name already exists' } });
    expect(await api.put(`/api/collections/${other.id}`, { name: 'WEB' })).toMatchObject({ status: 409 });
    expect((await api.get(`/api/collections/${other.id}`)).body.name).toBe('db');
  });

  it.each([
    ['no name', { filter: {} }, 'name'],
    ['an empty name', { name: '  ' }, 'name'],
    ['a filter that is not an object', { name: 'x', filter: 'web' }, 'filter'],
    ['an unknown filter key (a misspelt tags would match every instance)', { name: 'x', filter: { tag: 'web' } }, 'filter.tag'],
    ['a state the registry does not have', { name: 'x', filter: { state: 'gone' } }, 'filter.state'],
    ['a stack the registry does not have', { name: 'x', filter: { stack: 'staging' } }, 'filter.stack'],
    ['a host id that is not one', { name: 'x', filter: { host_id: 'pve1' } }, 'filter.host_id'],
    ['a bad tag', { name: 'x', filter: { tags: ['bad tag'] } }, 'filter.tags.0'],
    ['tags that are not a list', { name: 'x', filter: { tags: 'web' } }, 'filter.tags'],
  ])('refuses %s with 400 naming the field', async (_what, body, field) => {
    const res = await api.post('/api/collections', body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect((await api.get('/api/collections')).body).toEqual([]);
  });

  it('writes each change to the change log, naming the collection', async () => {
    const web = await make({ name: 'web', filter: { tags: ['web'] } });
    await api.put(`/api/collections/${web.id}`, { name: 'web', filter: { tags: ['web', 'edge'] } });
    await api.delete(`/api/collections/${web.id}`);
    const entries = (await api.get('/api/audit')).body.filter((e: { action: string }) => e.action.startsWith('collection.'));
    expect(entries.map((e: { action: string; summary: string }) => [e.action, e.summary])).toEqual([
      ['collection.delete', 'admin deleted collection “web”'],
      ['collection.update', 'admin changed collection “web”'],
      ['collection.create', 'admin added collection “web”'],
    ]);
    expect(entries[1].changes).toEqual([{ field: 'filter', before: '{"tags":["web"]}', after: '{"tags":["edge","web"]}' }]);
  });
});

describe('backups carry tags and collections', () => {
  it('exports both, and an import brings them back', async () => {
    const web = await make({ name: 'web', filter: { tags: ['web'] } });
    const doc = (await api.get('/api/export')).body;
    expect(doc.instances.find((i: { vmid: number }) => i.vmid === 301).tags).toEqual(['edge', 'web']);
    expect(doc.collections).toEqual([{ id: web.id, name: 'web', description: '', filter: { tags: ['web'] } }]);
    await api.delete(`/api/collections/${web.id}`);
    await api.put('/api/instances/301', { tags: [] });
    expect((await api.post('/api/import', doc)).status).toBe(200);
    expect((await api.get('/api/instances/301')).body.tags).toEqual(['edge', 'web']);
    expect((await api.get('/api/collections')).body).toEqual([{ id: web.id, name: 'web', description: '', filter: { tags: ['web'] }, count: 2 }]);
  });

  it('imports a document without tags with none, normalizes tags written by hand, and keeps collections when it has none', async () => {
    await make({ name: 'kept' });
    const doc = {
      version: 3,
      instances: [
        { vmid: 401, name: 'old', state: 'deployed', stack: 'development' },
        { vmid: 402, name: 'hand', state: 'deployed', stack: 'development', tags: ['Web', 'web', 'a'] },
      ],
    };
    expect((await api.post('/api/import', doc)).status).toBe(200);
    expect((await api.get('/api/instances/401')).body.tags).toEqual([]);
    expect((await api.get('/api/instances/402')).body.tags).toEqual(['a', 'web']);
    expect((await api.get('/api/collections')).body.map((c: { name: string }) => c.name)).toEqual(['kept']);
  });

  it.each([
    ['a bad tag', { instances: [{ vmid: 1, name: 'x', state: 'deployed', stack: 'development', tags: ['bad tag'] }] }, 'instances[0].tags.0'],
    ['a collection with an unknown filter key', { instances: [], collections: [{ id: 1, name: 'x', filter: { tag: 'web' } }] }, 'collections[0].filter.tag'],
    ['two collections of one name', { instances: [], collections: [{ id: 1, name: 'Web' }, { id: 2, name: 'web' }] }, 'collections[1].name'],
    ['collections that are not a list', { instances: [], collections: {} }, 'collections'],
  ])('refuses a backup with %s, naming the row, and changes nothing', async (_what, doc, field) => {
    await make({ name: 'kept' });
    const res = await api.post('/api/import', { version: 3, ...doc });
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors[0].field).toBe(field);
    expect((await api.get('/api/instances')).body).toHaveLength(3);
    expect((await api.get('/api/collections')).body.map((c: { name: string }) => c.name)).toEqual(['kept']);
  });
});
