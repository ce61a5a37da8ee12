import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { logIn, startServer, type TestServer } from '../../test/helpers/server.js';

const TOKEN = 'setup-token-for-tests-0123456789';
const servers: TestServer[] = [];
async function fresh(setupToken: string | null = TOKEN) {
  // A still clock: the throttle's fixed windows cannot turn over in the middle of a test.
  const server = await startServer({ config: { setupToken: setupToken ?? undefined }, signedIn: false, clock: manualClock() });
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

const admin = { username: 'first', display_name: 'First Admin', password: 'first-admin-password' };
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('GET /setup', () => {
  it('serves a script-free form with the token from ?token= filled in, under a strict CSP', async () => {
    const server = await fresh();
    const res = await server.anonymous().get('/setup?token=abc%22%3E%3Cscript%3E');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    expect(res.text).toContain('<form method="post" action="/setup">');
    expect(res.text).toContain('value="abc&quot;&gt;&lt;script&gt;"');
    expect(res.text).not.toMatch(/<script/i);
  });

  it('is a 404 page saying why when no token is configured or an account exists', async () => {
    const closed = await fresh(null);
    const noToken = await closed.anonymous().get('/setup');
    expect(noToken.status).toBe(404);
    expect(noToken.text).toContain('FLEET_SETUP_TOKEN is not set');
    const server = await fresh();
    expect((await server.anonymous().post('/setup', { ...admin, setup_token: TOKEN })).status).toBe(201);
    const done = await server.anonymous().get('/setup');
    expect(done.status).toBe(404);
    expect(done.text).toContain('An account already exists');
  });
});

describe('POST /setup', () => {
  it('creates the first administrator from JSON (201 {user}) and that account can sign in', async () => {
    const server = await fresh();
    const res = await server.anonymous().post('/setup', { ...admin, setup_token: TOKEN });
    expect(res.status).toBe(201);
    expect(res.body.user).toMatchObject({ id: 1, username: 'first', display_name: 'First Admin', role: 'administrator', enabled: true, must_change_password: false });
    const client = await logIn(server.anonymous(), 'first', admin.password);
    expect((await client.get('/api/users')).status).toBe(200);
  });

  it('creates it from the HTML form with a 303 to /login, which then says so', async () => {
    const server = await fresh();
    const res = await server.anonymous().post('/setup', form({ ...admin, setup_token: TOKEN }), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/login?setup=done');
    expect(server.accounts.list().map((a) => a.username)).toEqual(['first']);
  });

  it('refuses a wrong or missing token with 403 and creates nothing', async () => {
    const server = await fresh();
    for (const body of [{ ...admin, setup_token: 'wrong' }, { ...admin, setup_token: TOKEN + 'x' }, admin]) {
      const res = await server.anonymous().post('/setup', body);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'invalid setup token' });
    }
    const page = await server.anonymous().post('/setup', form({ ...admin, setup_token: 'nope' }), { 'content-type': 'application/x-www-form-urlencoded' });
    expect(page.status).toBe(403);
    expect(page.text).toContain('invalid setup token');
    expect(page.text).not.toContain('nope');
    expect(server.accounts.hasAccounts()).toBe(false);
  });

  it('refuses once an account exists, even with the right token (404)', async () => {
    const server = await fresh();
    expect((await server.anonymous().post('/setup', { ...admin, setup_token: TOKEN })).status).toBe(201);
    const again = await server.anonymous().post('/setup', { ...admin, username: 'second', setup_token: TOKEN });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'setup is closed' });
    expect(server.accounts.list()).toHaveLength(1);
  });

  it('refuses when no token is configured (404), whatever token is sent', async () => {
    const server = await fresh(null);
    const res = await server.anonymous().post('/setup', { ...admin, setup_token: '' });
    expect(res.status).toBe(404);
    expect(server.accounts.hasAccounts()).toBe(false);
  });

  it('the HTML form keeps the right token and the typed names after a validation error, never the password', async () => {
    const server = await fresh();
    const page = await server.anonymous().post('/setup', form({ setup_token: TOKEN, username: 'first', display_name: 'First Admin', password: 'short' }), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(page.status).toBe(400);
    expect(page.text).toContain(`id="setup_token" name="setup_token" type="password" required autocomplete="off" value="${TOKEN}"`);
    expect(page.text).toContain('value="first"');
    expect(page.text).not.toContain('value="short"');
  });

  it('the form asks for the password twice; a repeat that differs is a 400 naming it, and nothing is created', async () => {
    const server = await fresh();
    const blank = await server.anonymous().get(`/setup?token=${TOKEN}`);
    expect(blank.text).toContain('<label for="password_confirm">Repeat the password</label><input id="password_confirm" name="password_confirm" type="password" required');
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    const page = await server.anonymous().post('/setup', form({ setup_token: TOKEN, ...admin, password_confirm: 'first-admin-passwort' }), headers);
    expect(page.status).toBe(400);
    expect(page.text).toContain('<li>the repeated password does not match the password</li>');
    expect(page.text).not.toContain('first-admin-passw');
    const json = await server.anonymous().post('/setup', { setup_token: TOKEN, ...admin, password_confirm: '' });
    expect([json.status, json.body]).toEqual([400, { errors: [{ field: 'password_confirm', message: 'does not match the password' }] }]);
    expect(server.accounts.hasAccounts()).toBe(false);
    const done = await server.anonymous().post('/setup', form({ setup_token: TOKEN, ...admin, password_confirm: admin.password }), headers);
    expect([done.status, done.headers.get('location')]).toEqual([303, '/login?setup=done']);
  });

  it('answers 400 for invalid fields, listing them', async () => {
    const server = await fresh();
    const res = await server.anonymous().post('/setup', { setup_token: TOKEN, username: '', display_name: 'x', password: 'short' });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['username', 'password']);
  });

  it('throttles the 11th wrong token from one address with 429 and Retry-After', async () => {
    const server = await fresh();
    for (let i = 0; i < 10; i++) expect((await server.anonymous().post('/setup', { ...admin, setup_token: `guess-${i}` })).status).toBe(403);
    const res = await server.anonymous().post('/setup', { ...admin, setup_token: TOKEN });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(server.accounts.hasAccounts()).toBe(false);
  });
});
