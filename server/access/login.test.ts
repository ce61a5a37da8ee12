import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { rawRequest } from '../../test/helpers/raw.js';
import { ADMIN_PASSWORD, startServer, type TestServer } from '../../test/helpers/server.js';

const servers: TestServer[] = [];
async function start(...args: Parameters<typeof startServer>) {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-login-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('login', () => {
  it('answers 200 {user} and sets the HttpOnly SameSite=Lax development cookie over plain HTTP', async () => {
    const server = await start();
    const res = await server.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user: {
        id: 1,
        username: 'admin',
        display_name: 'Administrator',
        role: 'administrator',
        enabled: true,
        must_change_password: false,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        last_login_at: expect.stringMatching(/Z$/),
      },
    });
    const cookies = res.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatch(/^homefleet_session_dev=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/);
  });

  it('gives the same answer for a wrong password, an unknown user and a disabled account', async () => {
    const server = await start();
    const disabled = await server.accounts.create({ username: 'gone', display_name: 'Gone', role: 'viewer', password: 'gone-password' });
    expect((await server.client.patch(`/api/users/${disabled.id}`, { enabled: false })).status).toBe(200);
    const attempts = [
      { username: 'admin', password: 'not-the-password' },
      { username: 'nobody', password: 'not-the-password' },
      { username: 'gone', password: 'gone-password' },
    ];
    const answers = [];
    for (const body of attempts) {
      const res = await server.anonymous().post('/api/auth/login', body);
      answers.push({ status: res.status, body: res.body, cookies: res.headers.getSetCookie(), type: res.headers.get('content-type') });
    }
    expect(answers[0]).toEqual({ status: 401, body: { error: 'invalid credentials' }, cookies: [], type: 'application/json; charset=utf-8' });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it('a new login revokes the previous session of the account', async () => {
    const server = await start();
    const first = server.client;
    expect((await first.get('/api/auth/session')).status).toBe(200);
    const second = server.anonymous();
    await second.post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect((await first.get('/api/auth/session')).status).toBe(401);
    expect((await second.get('/api/auth/session')).status).toBe(200);
  });

  it('refuses plain HTTP unless FLEET_AUTH_ALLOW_HTTP=true, and then only for a loopback host name', async () => {
    const strict = await start({ config: { authAllowHttp: false, publicOrigin: 'http://127.0.0.1' }, signedIn: false });
    await strict.accounts.create({ username: 'admin', display_name: 'A', role: 'administrator', password: ADMIN_PASSWORD });
    const refused = await strict.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD }, { origin: 'http://127.0.0.1' });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'https required' });
    expect(refused.headers.getSetCookie()).toEqual([]);

    // fleet.lan is one of the server's names (else the Host check answers 421 first).
    const server = await start({ config: { allowedHosts: ['fleet.lan'] } });
    const port = new URL(server.baseUrl).port;
    const body = { username: 'admin', password: ADMIN_PASSWORD };
    for (const host of ['localhost', '127.0.0.1', '[::1]']) {
      const ok = await rawRequest(server.baseUrl, 'POST', '/api/auth/login', { host: `${host}:${port}`, origin: server.baseUrl }, body);
      expect(ok.status, host).toBe(200);
    }
    const lan = await rawRequest(server.baseUrl, 'POST', '/api/auth/login', { host: `fleet.lan:${port}`, origin: server.baseUrl }, body);
    expect(lan.status).toBe(403);
    expect(lan.body).toEqual({ error: 'https required' });
  });
});

describe('login throttling', () => {
  it('the 11th failed login from one address in a window is 429 with Retry-After, also after a restart', async () => {
    const clock = manualClock(Date.parse('2026-11-22T10:05:00.000Z'));
    const dbPath = path.join(dir, 'throttle.db');
    let server = await start({ dbPath, clock });
    for (let i = 1; i <= 10; i++) {
      // Different usernames, so the per-address limit is what trips, not the per-username one.
      const res = await server.anonymous().post('/api/auth/login', { username: `guess${i}`, password: 'wrong-password' });
      expect(res.status, `attempt ${i}`).toBe(401);
    }
    const eleventh = await server.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get('retry-after')).toBe('600');
    expect(eleventh.headers.getSetCookie()).toEqual([]);

    await server.stop();
    servers.splice(servers.indexOf(server), 1);
    clock.advance(60_000);
    server = await start({ dbPath, clock, signedIn: false });
    const afterRestart = await server.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect(afterRestart.status).toBe(429);
    expect(afterRestart.headers.get('retry-after')).toBe('540');

    clock.set(Date.parse('2026-11-22T10:15:00.000Z'));
    const nextWindow = await server.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD });
    expect(nextWindow.status).toBe(200);
  });

  it('the 6th failed login for one username is 429 whatever the address', async () => {
    const server = await start({ config: { trustProxy: 'loopback' }, clock: manualClock() });
    for (let i = 1; i <= 5; i++) {
      const res = await server.anonymous().post('/api/auth/login', { username: 'Admin', password: 'wrong' }, { 'x-forwarded-for': `203.0.113.${i}` });
      expect(res.status).toBe(401);
    }
    const sixth = await server.anonymous().post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD }, { 'x-forwarded-for': '203.0.113.99' });
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('counts by X-Forwarded-For only when the proxy is trusted', { timeout: 60_000 }, async () => {
    const trusting = await start({ config: { trustProxy: 'loopback' }, clock: manualClock() });
    for (let i = 1; i <= 10; i++) {
      await trusting.anonymous().post('/api/auth/login', { username: `u${i}`, password: 'wrong' }, { 'x-forwarded-for': '203.0.113.1' });
    }
    const sameClient = await trusting.anonymous().post('/api/auth/login', { username: 'x', password: 'wrong' }, { 'x-forwarded-for': '203.0.113.1' });
    expect(sameClient.status).toBe(429);
    const otherClient = await trusting.anonymous().post('/api/auth/login', { username: 'y', password: 'wrong' }, { 'x-forwarded-for': '203.0.113.2' });
    expect(otherClient.status).toBe(401);

    const direct = await start({ clock: manualClock() });
    for (let i = 1; i <= 10; i++) {
      await direct.anonymous().post('/api/auth/login', { username: `u${i}`, password: 'wrong' }, { 'x-forwarded-for': `198.51.100.${i}` });
    }
    const spoofed = await direct.anonymous().post('/api/auth/login', { username: 'z', password: 'wrong' }, { 'x-forwarded-for': '198.51.100.77' });
    expect(spoofed.status).toBe(429);
  });
});

describe('HTTPS behind a trusted proxy', () => {
  const origin = 'https://fleet.example.org';
  const body = { username: 'admin', password: ADMIN_PASSWORD };

  it('sets the __Host- Secure cookie when the trusted proxy says https, and the session works with it', async () => {
    const server = await start({ config: { authAllowHttp: false, trustProxy: 'loopback', publicOrigin: origin }, signedIn: false });
    await server.accounts.create({ username: 'admin', display_name: 'A', role: 'administrator', password: ADMIN_PASSWORD });
    const proxied = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'fleet.example.org', origin };
    const res = await rawRequest(server.baseUrl, 'POST', '/api/auth/login', proxied, body);
    expect(res.status).toBe(200);
    const cookie = res.headers['set-cookie']!;
    expect(cookie).toHaveLength(1);
    expect(cookie[0]).toMatch(/^__Host-homefleet_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; Secure; SameSite=Lax$/);
    const pair = cookie[0]!.split(';')[0]!;
    expect((await rawRequest(server.baseUrl, 'GET', '/api/auth/session', { ...proxied, cookie: pair })).status).toBe(200);
    // The same token in the development cookie's name, or over plain HTTP, is not a session.
    const token = pair.split('=')[1];
    expect((await rawRequest(server.baseUrl, 'GET', '/api/auth/session', { ...proxied, cookie: `homefleet_session_dev=${token}` })).status).toBe(401);
    expect((await rawRequest(server.baseUrl, 'GET', '/api/auth/session', { cookie: pair })).status).toBe(401);
    // Origin is the configured public origin only.
    const wrongOrigin = await rawRequest(server.baseUrl, 'POST', '/api/auth/login', { ...proxied, origin: server.baseUrl }, body);
    expect(wrongOrigin.status).toBe(403);
    expect(wrongOrigin.body).toEqual({ error: 'origin mismatch' });
  });

  it('ignores X-Forwarded-Proto from a proxy that is not configured', async () => {
    const server = await start({ config: { authAllowHttp: false, publicOrigin: origin }, signedIn: false });
    await server.accounts.create({ username: 'admin', display_name: 'A', role: 'administrator', password: ADMIN_PASSWORD });
    const res = await rawRequest(server.baseUrl, 'POST', '/api/auth/login', { 'x-forwarded-proto': 'https', origin }, body);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'https required' });
    expect(res.headers['set-cookie']).toBeUndefined();
  });
});
