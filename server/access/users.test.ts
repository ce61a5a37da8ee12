import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';

let server: TestServer;
beforeEach(async () => {
  server = await startServer({ clock: manualClock() });
});
afterEach(() => server.stop());

describe('the last enabled administrator', () => {
  it('cannot be disabled or demoted (409 last administrator), by anyone', async () => {
    for (const patch of [{ enabled: false }, { role: 'operator' }, { role: 'viewer', enabled: false }]) {
      const res = await server.client.patch('/api/users/1', patch);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'last administrator' });
    }
    expect((await server.client.get('/api/users')).body[0]).toMatchObject({ role: 'administrator', enabled: true });
  });

  it('can be once another enabled administrator exists, and then the other one is the last', async () => {
    const second = (await server.client.post('/api/users', { username: 'second', display_name: 'Second', role: 'administrator' })).body.user;
    const demoted = await server.client.patch('/api/users/1', { role: 'operator' });
    expect(demoted.status).toBe(200);
    expect(demoted.body.user).toMatchObject({ id: 1, role: 'operator' });
    // A disabled administrator does not count as the other one.
    const other = await server.signIn('administrator', 'third');
    const thirdId = (await other.get('/api/auth/session')).body.user.id;
    expect((await other.patch(`/api/users/${thirdId}`, { enabled: false })).status).toBe(200);
    expect(() => server.accounts.update(second.id, { enabled: false })).toThrow('last administrator');
    // The demoted account's old cookie no longer carries administrator rights.
    expect((await server.client.get('/api/users')).status).toBe(401);
  });
});

describe('user management', () => {
  it('creates an account with a temporary password, lists it without any hash', async () => {
    const res = await server.client.post('/api/users', { username: 'ops', display_name: 'Ops', role: 'operator' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: { id: 2, username: 'ops', display_name: 'Ops', role: 'operator', enabled: true, must_change_password: true, created_at: '2026-11-22T10:00:00Z', last_login_at: null },
      temporary_password: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
    });
    const list = await server.client.get('/api/users');
    expect(list.body.map((u: { username: string }) => u.username)).toEqual(['admin', 'ops']);
    expect(Object.keys(list.body[1]).sort()).toEqual(['created_at', 'display_name', 'enabled', 'id', 'last_login_at', 'must_change_password', 'role', 'username']);
  });

  it('refuses a taken username (any case) with 409 and invalid fields with 400', async () => {
    const taken = await server.client.post('/api/users', { username: 'ADMIN', display_name: 'A', role: 'viewer' });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual({ error: 'username taken' });
    const invalid = await server.client.post('/api/users', { username: 'has space', display_name: '', role: 'root' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors.map((e: { field: string }) => e.field)).toEqual(['username', 'display_name', 'role']);
    expect((await server.client.patch('/api/users/1', { enabled: 'no' })).status).toBe(400);
    expect((await server.client.patch('/api/users/99', { enabled: true })).status).toBe(404);
    expect((await server.client.patch('/api/users/x', { enabled: true })).status).toBe(400);
  });

  it('a disabled account can be enabled again and sign in', async () => {
    const user = await server.signIn('viewer', 'vic');
    const id = (await user.get('/api/auth/session')).body.user.id;
    await server.client.patch(`/api/users/${id}`, { enabled: false });
    const back = await server.client.patch(`/api/users/${id}`, { enabled: true, display_name: 'Vic' });
    expect(back.body.user).toMatchObject({ enabled: true, display_name: 'Vic' });
    expect((await server.signIn('viewer')).cookieHeader()).not.toBe('');
  });
});

describe('audit', () => {
  it('records logins, account changes and successful management writes, newest first, paged', async () => {
    await server.anonymous().post('/api/auth/login', { username: 'admin', password: 'wrong-password' });
    await server.client.post('/api/instances', buildInstance({ vmid: 77 }));
    await server.client.post('/api/instances', buildInstance({ vmid: 77 })); // 409: not a successful write
    await server.client.get('/api/instances');
    await server.client.post('/api/users', { username: 'ops', display_name: 'Ops', role: 'operator' });
    await server.client.patch('/api/users/2', { role: 'viewer' });
    const res = await server.client.get('/api/audit');
    expect(res.status).toBe(200);
    const shape = res.body.map((e: { actor: string; action: string; target: string; detail: object }) => [e.actor, e.action, e.target, e.detail]);
    expect(shape).toEqual([
      // An account action is recorded once, by its own entry: no generic `request` entry beside it.
      ['admin', 'user.update', 'ops', { id: 2, changes: { role: { from: 'operator', to: 'viewer' } } }],
      ['admin', 'user.create', 'ops', { id: 2, role: 'operator' }],
      ['admin', 'request', 'instance 77', { method: 'POST', path: '/api/instances', status: 201 }],
      [null, 'login.failure', 'admin', {}],
      ['admin', 'login.success', 'admin', {}],
      [null, 'user.create', 'admin', { id: 1, role: 'administrator' }],
    ]);
    expect(res.body[0]).toMatchObject({ at: '2026-11-22T10:00:00.000Z', ip: '127.0.0.1' });
    const page = await server.client.get(`/api/audit?limit=2&before=${res.body[1].id}`);
    expect(page.body.map((e: { id: number }) => e.id)).toEqual([res.body[2].id, res.body[3].id]);
    expect((await server.client.get('/api/audit?limit=1001')).status).toBe(400);
    expect((await server.client.get('/api/audit?limit=0')).status).toBe(400);
  });
});
