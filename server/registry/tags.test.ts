import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import type { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';

// Tags and bulk edit (PRODUCT.md "Collections, scripts, campaigns and release channels"), in process
// on an in-memory database. test/collections.test.ts runs the same routes against the built server.
let server: TestServer;
let api: TestClient;

beforeEach(async () => {
  server = await startServer({ clock: manualClock() });
  api = server.client;
});
afterEach(() => server.stop());

async function create(overrides: Record<string, unknown> = {}) {
  const res = await api.post('/api/instances', buildInstance(overrides));
  expect(res.status, res.text).toBe(201);
  return res.body;
}
const tagsOf = async (vmid: number) => (await api.get(`/api/instances/${vmid}`)).body.tags;
const history = async (vmid: number) =>
  ((await api.get(`/api/instances/${vmid}/history`)).body as Array<{ field: string; old_value: string | null; new_value: string | null }>)
    .filter((h) => h.field !== 'created')
    .map(({ field, old_value, new_value }) => ({ field, old_value, new_value }));

describe('tags on instances', () => {
  it('are lower-cased, deduplicated and sorted on create and update; none by default', async () => {
    expect((await create({ vmid: 101 })).tags).toEqual([]);
    expect((await create({ vmid: 102, tags: ['Web', 'web', 'db', 'edge.1'] })).tags).toEqual(['db', 'edge.1', 'web']);
    const res = await api.put('/api/instances/101', { tags: ['Z9', 'a_b-c'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.tags).toEqual(['a_b-c', 'z9']);
    expect(await tagsOf(101)).toEqual(['a_b-c', 'z9']);
  });

  it.each([
    ['not a list', 'web', 'tags', 'must be a list of tags'],
    ['a tag with a space', ['web server'], 'tags.0', 'must be a tag'],
    ['a tag starting with a dash', ['-web'], 'tags.0', 'must be a tag'],
    ['a tag of 33 characters', ['a'.repeat(33)], 'tags.0', 'must be a tag'],
    ['a tag that is not text', [7], 'tags.0', 'must be a tag'],
    ['17 tags', Array.from({ length: 17 }, (_, i) => `t${i}`), 'tags', 'must hold at most 16 tags'],
  ])('refuses %s with 400 naming the field, on create and on update', async (_what, tags, field, message) => {
    const created = await api.post('/api/instances', buildInstance({ vmid: 110, tags }));
    expect(created.status).toBe(400);
    expect(created.body.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
    await create({ vmid: 111, tags: ['keep'] });
    const updated = await api.put('/api/instances/111', { tags });
    expect(updated.status).toBe(400);
    expect(updated.body.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
    expect(await tagsOf(111)).toEqual(['keep']);
  });

  it('takes 16 tags, and 17 that are 16 once duplicates go', async () => {
    const sixteen = Array.from({ length: 16 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    expect((await create({ vmid: 120, tags: sixteen })).tags).toEqual(sixteen);
    expect((await create({ vmid: 121, tags: [...sixteen, 'T00'] })).tags).toEqual(sixteen);
  });

  it('records a change in history as field tags, old and new comma-joined; the same tags in another order are no change', async () => {
    await create({ vmid: 130, tags: ['web'] });
    await api.put('/api/instances/130', { tags: ['web', 'db'] });
    await api.put('/api/instances/130', { tags: ['DB', 'web'] });
    await api.put('/api/instances/130', { tags: [] });
    expect(await history(130)).toEqual([
      { field: 'tags', old_value: 'db,web', new_value: '' },
      { field: 'tags', old_value: 'web', new_value: 'db,web' },
    ]);
  });

  it('filters the list with ?tag=a&tag=b: every tag must be on the instance, matched whole and case-insensitively', async () => {
    await create({ vmid: 140, name: 'a', tags: ['web', 'edge'] });
    await create({ vmid: 141, name: 'b', tags: ['web'] });
    await create({ vmid: 142, name: 'c', tags: ['web_x', 'edge'] });
    await create({ vmid: 143, name: 'd' });
    const vmids = async (query: string) => {
      const res = await api.get(`/api/instances?${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body.map((i: { vmid: number }) => i.vmid);
    };
    expect(await vmids('tag=web')).toEqual([140, 141]);
    expect(await vmids('tag=web&tag=edge')).toEqual([140]);
    expect(await vmids('tag=EDGE')).toEqual([140, 142]);
    expect(await vmids('tag=web_x')).toEqual([142]);
    expect(await vmids('tag=we')).toEqual([]);
    expect(await vmids('tag=')).toEqual([140, 141, 142, 143]);
    expect(await vmids('tag=web&state=deployed&search=a')).toEqual([140]);
  });

  it('refuses a tag filter that names no tag with 400', async () => {
    for (const query of ['tag=web%20server', 'tag=-x', `tag=${'a'.repeat(33)}`, Array.from({ length: 17 }, (_, i) => `tag=t${i}`).join('&')]) {
      const res = await api.get(`/api/instances?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].field).toBe('tag');
    }
  });
});

describe('bulk edit', () => {
  beforeEach(async () => {
    await create({ vmid: 201, state: 'testing', tags: ['web'] });
    await create({ vmid: 202, state: 'testing', tags: ['db'] });
    await create({ vmid: 203, state: 'deployed', tags: [] });
  });

  it('sets fields and adds and removes tags on every instance named, one history entry per changed field', async () => {
    const res = await api.post('/api/instances/bulk', { vmids: [201, 202, 203, 201], set: { state: 'deployed', atlas: 1 }, add_tags: ['Edge'], remove_tags: ['db'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ updated: 3 });
    // Newest first; the fields of one change in reverse order of writing.
    expect(await history(201)).toEqual([
      { field: 'tags', old_value: 'web', new_value: 'edge,web' },
      { field: 'atlas', old_value: '0', new_value: '1' },
      { field: 'state', old_value: 'testing', new_value: 'deployed' },
    ]);
    expect(await tagsOf(202)).toEqual(['edge']);
    expect(await history(203)).toEqual(expect.arrayContaining([{ field: 'tags', old_value: '', new_value: 'edge' }, { field: 'atlas', old_value: '0', new_value: '1' }]));
    expect(await history(203)).toHaveLength(2);
  });

  it('counts only the instances it changed, and records nothing for the others', async () => {
    const auditRows = () => server.db.prepare("SELECT count(*) FROM audit_log WHERE action = 'request'").pluck().get() as number;
    const before = auditRows();
    const res = await api.post('/api/instances/bulk', { vmids: [201, 202, 203], set: { state: 'deployed' } });
    expect(res.body).toEqual({ updated: 2 });
    expect(await history(203)).toEqual([]);
    // One change log entry per changed instance, as an edit writes it.
    expect(auditRows() - before).toBe(2);
    expect((await api.post('/api/instances/bulk', { vmids: [201, 202, 203], set: { state: 'deployed' } })).body).toEqual({ updated: 0 });
  });

  it('is all or nothing: the first instance that cannot take the change is a 400 naming its vmid and field, and no instance changes', async () => {
    const many = Array.from({ length: 16 }, (_, i) => `t${i}`);
    await api.put('/api/instances/203', { tags: many });
    const res = await api.post('/api/instances/bulk', { vmids: [201, 202, 203], set: { state: 'degraded' }, add_tags: ['extra'] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ field: 'tags', vmid: 203, message: 'vmid 203: must hold at most 16 tags' }] });
    for (const vmid of [201, 202]) expect((await api.get(`/api/instances/${vmid}`)).body).toMatchObject({ state: 'testing' });
    expect(await history(201)).toEqual([]);
  });

  it('refuses an unknown vmid with 400 naming it, and changes nothing', async () => {
    const res = await api.post('/api/instances/bulk', { vmids: [201, 999], set: { state: 'degraded' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ field: 'vmids', vmid: 999, message: 'vmid 999: no such instance' }] });
    expect((await api.get('/api/instances/201')).body.state).toBe('testing');
  });

  it.each([
    ['no vmids', { vmids: [], set: { state: 'deployed' } }, 'vmids'],
    ['1001 vmids', { vmids: Array.from({ length: 1001 }, (_, i) => i + 1), set: { state: 'deployed' } }, 'vmids'],
    ['a vmid that is not one', { vmids: [201, 'x'], set: { state: 'deployed' } }, 'vmids.1'],
    ['nothing to change', { vmids: [201] }, 'set'],
    ['only fields bulk edit does not set', { vmids: [201], set: { name: 'x' } }, 'set'],
    ['an unknown state', { vmids: [201], set: { state: 'gone' } }, 'set.state'],
    ['a flag of 2', { vmids: [201], set: { argus: 2 } }, 'set.argus'],
    ['a bad tag', { vmids: [201], add_tags: ['bad tag'] }, 'add_tags.0'],
    ['a tag both added and removed', { vmids: [201], add_tags: ['web'], remove_tags: ['WEB'] }, 'remove_tags'],
    ['a body that is not an object', [201], 'body'],
  ])('refuses %s with 400 naming the field', async (_what, body, field) => {
    const res = await api.post('/api/instances/bulk', body);
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(await history(201)).toEqual([]);
  });

  // An edit is planned before its transaction (a slice per turn of the event loop), so others write in between.
  it('stores what its own transaction reads: an instance changed after the edit was planned is planned again', async () => {
    const edit = server.instances.bulkEdit({ vmids: [201, 202], add_tags: ['x'] });
    // Planned by now (one slice, before the first wait), not yet stored.
    server.instances.update(201, { tags: ['web', 'late'] });
    expect(await edit).toEqual({ updated: 2 });
    expect(await tagsOf(201)).toEqual(['late', 'web', 'x']);
    expect((await history(201))[0]).toEqual({ field: 'tags', old_value: 'late,web', new_value: 'late,web,x' });
  });

  it('refuses the whole edit when an instance was deleted after it was planned', async () => {
    const edit = server.instances.bulkEdit({ vmids: [201, 202], add_tags: ['x'] });
    server.instances.remove(202);
    await expect(edit).rejects.toMatchObject({ status: 400, body: { errors: [{ field: 'vmids', vmid: 202, message: 'vmid 202: no such instance' }] } });
    expect(await tagsOf(201)).toEqual(['web']);
    expect(await history(201)).toEqual([]);
  });

  it('announces each changed instance once the edit has committed', async () => {
    const heard: number[] = [];
    server.context.bus.on('instance.updated', ({ instance }) => void heard.push(instance.vmid));
    await api.post('/api/instances/bulk', { vmids: [201, 202], add_tags: ['x'] });
    expect(heard.sort()).toEqual([201, 202]);
  });
});
