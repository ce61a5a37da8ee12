import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, type ManualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { rawRequest } from '../../test/helpers/raw.js';
import { logIn, startServer, USER_PASSWORD, type TestServer } from '../../test/helpers/server.js';

let server: TestServer;
let clock: ManualClock;
beforeEach(async () => {
  clock = manualClock();
  // Names that are the server's own (else the Host check answers 421) but not loopback names.
  server = await startServer({ clock, config: { allowedHosts: ['fleet.lan', '192.0.2.2', 'localhost.evil.example'] } });
});
afterEach(() => server.stop());

const MINUTE = 60_000;

describe('Origin on state-changing requests', () => {
  it.each([
    ['missing', ''],
    ['another site', 'https://evil.example'],
    ['another port', 'http://127.0.0.1:1'],
    ['a look-alike', 'http://127.0.0.1.evil.example'],
  ])('%s Origin is 403 origin mismatch and nothing is written', async (_what, origin) => {
    for (const res of [
      await server.client.post('/api/instances', buildInstance({ vmid: 5 }), { origin }),
      await server.client.post('/api/users', { username: 'x', display_name: 'X', role: 'viewer' }, { origin }),
      await server.client.post('/api/auth/password', { current_password: 'a', new_password: 'bbbbbbbb' }, { origin }),
      await server.client.post('/api/auth/logout', undefined, { origin }),
      await server.anonymous().post('/api/auth/login', { username: 'admin', password: 'whatever1' }, { origin }),
      await server.anonymous().post('/setup', { setup_token: 't' }, { origin }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'origin mismatch' });
    }
    expect((await server.client.get('/api/instances')).body).toEqual([]);
    expect((await server.client.get('/api/auth/session')).status).toBe(200);
  });

  it('accepts the loopback origins of the port the request arrived on', async () => {
    const port = new URL(server.baseUrl).port;
    for (const [i, origin] of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`].entries()) {
      expect((await server.client.post('/api/instances', buildInstance({ vmid: 10 + i }), { origin })).status).toBe(201);
    }
  });

  it('GET needs no Origin', async () => {
    expect((await server.client.get('/api/instances', { origin: 'https://evil.example' })).status).toBe(200);
  });
});

describe('old cookies stop working', () => {
  it("a disabled user's, a demoted user's, a reset user's and a revoked user's cookie gets 401", async () => {
    for (const change of ['disable', 'demote', 'reset', 'revoke'] as const) {
      const user = await server.signIn('operator', `op-${change}`);
      const { id } = (await user.get('/api/auth/session')).body.user;
      if (change === 'disable') expect((await server.client.patch(`/api/users/${id}`, { enabled: false })).status).toBe(200);
      if (change === 'demote') expect((await server.client.patch(`/api/users/${id}`, { role: 'viewer' })).status).toBe(200);
      if (change === 'reset') expect((await server.client.post(`/api/users/${id}/reset-password`)).status).toBe(200);
      if (change === 'revoke') expect((await server.client.post(`/api/users/${id}/revoke-sessions`)).status).toBe(204);
      const res = await user.get('/api/instances');
      expect(res.status, change).toBe(401);
      expect(res.body).toEqual({ error: 'authentication required' });
    }
  });

  it("a password change ends the user's other sessions and issues a new cookie to the one that changed it", async () => {
    const user = await server.signIn('viewer', 'pat');
    const stolen = server.anonymous();
    stolen.setCookie('homefleet_session_dev', user.cookieHeader().split('=')[1]!);
    expect((await stolen.get('/api/instances')).status).toBe(200);
    const res = await user.post('/api/auth/password', { current_password: USER_PASSWORD, new_password: 'a-brand-new-password' });
    expect(res.status).toBe(204);
    expect(res.headers.getSetCookie()[0]).toMatch(/^homefleet_session_dev=/);
    expect((await stolen.get('/api/instances')).status).toBe(401);
    expect((await user.get('/api/instances')).status).toBe(200);
    await expect(logIn(server.anonymous(), 'pat', USER_PASSWORD)).rejects.toThrow('401');
    await logIn(server.anonymous(), 'pat', 'a-brand-new-password');
  });

  it('logout answers 204, clears the cookie and revokes the session', async () => {
    const user = await server.signIn('viewer');
    const token = user.cookieHeader();
    const res = await user.post('/api/auth/logout');
    expect(res.status).toBe(204);
    expect(res.headers.getSetCookie()[0]).toMatch(/^homefleet_session_dev=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/);
    const replay = await rawRequest(server.baseUrl, 'GET', '/api/auth/session', { cookie: token });
    expect(replay.status).toBe(401);
    expect((await user.post('/api/auth/logout')).status).toBe(401);
  });
});

describe('expiry', () => {
  it('reports the absolute and idle expiry of the session', async () => {
    const res = await server.client.get('/api/auth/session');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user: { username: 'admin', role: 'administrator' }, expires_at: '2026-11-22T22:00:00.000Z', idle_expires_at: '2026-11-22T10:30:00.000Z' });
    clock.advance(10 * MINUTE);
    expect((await server.client.get('/api/auth/session')).body.idle_expires_at).toBe('2026-11-22T10:40:00.000Z');
  });

  it('ends after 30 minutes without an authenticated request; any request, polling included, refreshes it', async () => {
    clock.advance(29 * MINUTE);
    expect((await server.client.get('/api/instances')).status).toBe(200);
    clock.advance(29 * MINUTE);
    expect((await server.client.get('/api/instances')).status).toBe(200);
    clock.advance(30 * MINUTE);
    const res = await server.client.get('/api/instances');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'authentication required' });
  });

  it('ends 12 hours after sign-in however active it is', async () => {
    for (let minutes = 20; minutes < 12 * 60; minutes += 20) {
      clock.advance(20 * MINUTE);
      expect((await server.client.get('/api/auth/session')).status, `${minutes} min`).toBe(200);
    }
    clock.set(Date.parse('2026-11-22T21:59:59.000Z'));
    expect((await server.client.get('/api/auth/session')).status).toBe(200);
    clock.advance(1000);
    expect((await server.client.get('/api/auth/session')).status).toBe(401);
  });
});

describe('temporary passwords', () => {
  it('an account with a temporary password can only see its session, change its password or sign out', async () => {
    const created = await server.client.post('/api/users', { username: 'newbie', display_name: 'New', role: 'operator' });
    expect(created.status).toBe(201);
    expect(created.body.user).toMatchObject({ username: 'newbie', role: 'operator', must_change_password: true, enabled: true });
    const temporary = created.body.temporary_password as string;
    expect(temporary.length).toBeGreaterThanOrEqual(16);
    const newbie = await logIn(server.anonymous(), 'newbie', temporary);
    for (const res of [await newbie.get('/api/instances'), await newbie.post('/api/instances', buildInstance()), await newbie.get('/api/telemetry')]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'password change required' });
    }
    expect((await newbie.get('/api/auth/session')).body.user.must_change_password).toBe(true);
    expect((await newbie.post('/api/auth/password', { current_password: temporary, new_password: 'chosen-by-newbie' })).status).toBe(204);
    expect((await newbie.get('/api/auth/session')).body.user.must_change_password).toBe(false);
    expect((await newbie.post('/api/instances', buildInstance())).status).toBe(201);
  });

  it('a wrong current password is 401 and the 6th try in a window is 429 before any hashing', async () => {
    const user = await server.signIn('viewer');
    for (let i = 1; i <= 5; i++) {
      const res = await user.post('/api/auth/password', { current_password: `wrong-${i}`, new_password: 'new-password-1' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'wrong current password' });
    }
    const sixth = await user.post('/api/auth/password', { current_password: USER_PASSWORD, new_password: 'new-password-1' });
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get('retry-after')).toBe('900');
    expect((await user.post('/api/auth/password', { current_password: USER_PASSWORD, new_password: 'short' })).status).toBe(400);
  });
});

describe('the development cookie', () => {
  const issue = (s: TestServer, username: string) =>
    s.context.transaction(() => s.accounts.sessions.issue(s.accounts.repo.byUsername(username)!.id))();

  it('is accepted over plain HTTP only on a loopback host name when FLEET_AUTH_ALLOW_HTTP is on', async () => {
    const port = new URL(server.baseUrl).port;
    const cookie = `homefleet_session_dev=${issue(server, 'admin')}`;
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      expect((await rawRequest(server.baseUrl, 'GET', '/api/auth/session', { host: `${host}:${port}`, cookie })).status, host).toBe(200);
    }
    for (const host of ['fleet.lan', '192.0.2.2', 'localhost.evil.example']) {
      const res = await rawRequest(server.baseUrl, 'GET', '/api/auth/session', { host: `${host}:${port}`, cookie });
      expect([res.status, res.body], host).toEqual([401, { error: 'authentication required' }]);
    }
  });

  it('is neither accepted nor set on a server where plain-HTTP login is off', async () => {
    const strict = await startServer({ config: { authAllowHttp: false, publicOrigin: 'https://fleet.example.org' }, signedIn: false });
    try {
      await strict.accounts.create({ username: 'admin', display_name: 'A', role: 'administrator', password: 'admin-password-1' });
      const cookie = `homefleet_session_dev=${issue(strict, 'admin')}`;
      const res = await rawRequest(strict.baseUrl, 'GET', '/api/auth/session', { cookie });
      expect([res.status, res.body]).toEqual([401, { error: 'authentication required' }]);
      const login = await rawRequest(strict.baseUrl, 'POST', '/api/auth/login', { origin: 'https://fleet.example.org' }, { username: 'admin', password: 'admin-password-1' });
      expect(login.status).toBe(403);
      expect(login.headers['set-cookie']).toBeUndefined();
    } finally {
      await strict.stop();
    }
  });
});
