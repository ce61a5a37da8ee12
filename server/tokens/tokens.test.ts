import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import type { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import type { Role } from '../contract/access.js';

const servers: TestServer[] = [];
async function start(...args: Parameters<typeof startServer>) {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** Creates a token through the API as `client` (a signed-in browser) and returns the 201 body. */
async function createToken(client: TestClient, role: Role, extra: Record<string, unknown> = {}) {
  const res = await client.post('/api/tokens', { name: `${role} script`, role, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; token: string; name: string; role: Role };
}

/** A script: no cookie, no Origin, only the bearer token. */
function script(server: TestServer, token: string) {
  return server.anonymous().fresh({ authorization: `Bearer ${token}`, origin: '' });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('creating a token', () => {
  it('shows the hfp_ token once and stores only its SHA-256', async () => {
    const server = await start();
    const res = await server.client.post('/api/tokens', { name: 'backup cron', role: 'operator', expires_at: '2099-01-01T00:00:00Z' });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      id: 1,
      name: 'backup cron',
      role: 'operator',
      user: { id: 1, username: 'admin' },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      expires_at: '2099-01-01T00:00:00.000Z',
      last_used_at: null,
      last_used_ip: null,
      token: expect.stringMatching(/^hfp_[A-Za-z0-9_-]{43}$/),
    });
    const token: string = res.body.token;
    const list = await server.client.get('/api/tokens');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(token.slice(4));
    expect(list.body).toEqual([{ ...res.body, token: undefined }].map(({ token: _t, ...rest }) => rest));
    const row = server.db.prepare('SELECT * FROM api_tokens').get() as Record<string, unknown>;
    expect(row.token_hash).toBe(sha256(token));
    const everything = JSON.stringify(server.db.prepare("SELECT * FROM api_tokens").all()) + JSON.stringify(server.db.prepare('SELECT * FROM audit_log').all());
    expect(everything).not.toContain(token.slice(4));
  });

  it('refuses a role above the creator’s own, an expiry in the past and a missing name with 400', async () => {
    const server = await start();
    const operator = await server.signIn('operator');
    expect((await operator.post('/api/tokens', { name: 'x', role: 'administrator' })).body).toEqual({
      errors: [{ field: 'role', message: 'cannot be higher than your own role (operator)' }],
    });
    const past = await operator.post('/api/tokens', { name: 'x', role: 'viewer', expires_at: '2001-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.body).toEqual({ errors: [{ field: 'expires_at', message: 'must be in the future' }] });
    const bad = await operator.post('/api/tokens', { name: '  ', role: 'viewer', expires_at: 'tomorrow' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['expires_at', 'name']);
    expect(server.db.prepare('SELECT count(*) AS n FROM api_tokens').get()).toEqual({ n: 0 });
  });
});

describe('a bearer token', () => {
  it('reads and writes at its role with no cookie and no Origin, and never makes a browser session', async () => {
    const server = await start();
    const { token } = await createToken(server.client, 'operator');
    const sessionsBefore = server.db.prepare('SELECT id FROM sessions').all();
    const s = script(server, token);
    const created = await s.post('/api/instances', buildInstance({ vmid: 4242 }));
    expect(created.status, created.text).toBe(201);
    expect(created.headers.getSetCookie()).toEqual([]);
    const read = await s.get('/api/instances/4242');
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBe('no-store');
    expect(read.body.vmid).toBe(4242);
    // The administrator's browser is still signed in: a token never replaces a session.
    expect(server.db.prepare('SELECT id FROM sessions').all()).toEqual(sessionsBefore);
    expect((await server.client.get('/api/auth/session')).status).toBe(200);
  });

  it('is refused with 401 when wrong, of another kind, expired, revoked, or its owner is disabled', async () => {
    const clock = manualClock(Date.parse('2026-11-22T10:00:00.000Z'));
    const server = await start({ clock });
    const operator = await server.signIn('operator', 'olga');
    const expiring = await createToken(operator, 'viewer', { expires_at: '2026-11-22T10:20:00Z' });
    const revoked = await createToken(operator, 'viewer');
    const ownerDisabled = await createToken(operator, 'viewer');
    const good = await createToken(server.client, 'viewer');

    expect((await script(server, expiring.token).get('/api/instances')).status).toBe(200);
    clock.set(Date.parse('2026-11-22T10:20:00.000Z'));
    expect((await operator.delete(`/api/tokens/${revoked.id}`)).status).toBe(204);
    const olga = server.accounts.repo.byUsername('olga')!;
    expect((await server.client.patch(`/api/users/${olga.id}`, { enabled: false })).status).toBe(200);

    const refused = [
      'hfp_' + 'A'.repeat(43), // well-formed, unknown
      good.token.slice(0, -1) + (good.token.endsWith('A') ? 'B' : 'A'), // one character off
      'hfe_' + good.token.slice(4), // the right secret with an enrollment token's prefix
      'hfh_' + good.token.slice(4),
      'hfr_' + good.token.slice(4),
      good.token + 'x',
      expiring.token,
      revoked.token,
      ownerDisabled.token,
    ];
    for (const token of refused) {
      const res = await script(server, token).get('/api/instances');
      expect({ token, status: res.status, body: res.body }).toEqual({ token, status: 401, body: { error: 'invalid token' } });
    }
    expect((await script(server, good.token).get('/api/instances')).status).toBe(200);
  });

  it('of a viewer cannot write, and nothing changes', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer');
    const { token } = await createToken(viewer, 'viewer');
    const s = script(server, token);
    expect(await s.post('/api/instances', buildInstance())).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect((await s.post('/api/import', { version: 3, instances: [] })).status).toBe(403);
    expect((await s.get('/api/instances')).body).toEqual([]);
  });

  it('of an administrator whose role is viewer cannot write either', async () => {
    const server = await start();
    const { token } = await createToken(server.client, 'viewer');
    expect((await script(server, token).post('/api/instances', buildInstance())).status).toBe(403);
    expect((await script(server, token).get('/api/export')).status).toBe(403);
  });

  it('cannot reach the session, password, token, user management, audit or agent routes', async () => {
    const server = await start();
    const { token } = await createToken(server.client, 'administrator');
    const s = script(server, token);
    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/auth/session'],
      ['POST', '/api/auth/logout'],
      ['POST', '/api/auth/password', { current_password: 'x', new_password: 'another-password-1' }],
      ['GET', '/api/tokens'],
      ['POST', '/api/tokens', { name: 'more', role: 'administrator' }],
      ['DELETE', '/api/tokens/1'],
      ['GET', '/api/users'],
      ['POST', '/api/users', { username: 'mallory', display_name: 'M', role: 'administrator' }],
      ['PATCH', '/api/users/1', { role: 'viewer' }],
      ['POST', '/api/users/1/reset-password'],
      ['POST', '/api/users/1/revoke-sessions'],
      ['GET', '/api/audit'],
      ['POST', '/api/agent/heartbeat', { agent_version: '1' }],
      ['POST', '/api/agent/enroll', { hostname: 'h' }],
    ];
    for (const [method, path, body] of calls) {
      const res = await s.request(method, path, body);
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 401`);
    }
    expect(server.accounts.repo.byUsername('mallory')).toBeUndefined();
    expect(server.db.prepare('SELECT count(*) AS n FROM api_tokens').get()).toEqual({ n: 1 });
    // The token itself still works where it belongs.
    expect((await s.get('/api/export')).status).toBe(200);
  });

  it('is capped at its owner’s new role after a role change', async () => {
    const server = await start();
    const operator = await server.signIn('operator', 'otto');
    const { token } = await createToken(operator, 'operator');
    const s = script(server, token);
    expect((await s.post('/api/instances', buildInstance())).status).toBe(201);
    const otto = server.accounts.repo.byUsername('otto')!;
    expect((await server.client.patch(`/api/users/${otto.id}`, { role: 'viewer' })).status).toBe(200);
    expect((await s.post('/api/instances', buildInstance())).status).toBe(403);
    expect((await s.get('/api/instances')).status).toBe(200);
  });

  it('stops while its owner must change a temporary password', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer', 'vera');
    const { token } = await createToken(viewer, 'viewer');
    const vera = server.accounts.repo.byUsername('vera')!;
    expect((await server.client.post(`/api/users/${vera.id}/reset-password`)).status).toBe(200);
    expect(await script(server, token).get('/api/instances')).toMatchObject({ status: 403, body: { error: 'password change required' } });
  });

  it('has every write audited with the token id and name and the user', async () => {
    const server = await start();
    const operator = await server.signIn('operator', 'oscar');
    const { id, token } = await createToken(operator, 'operator', { name: 'nightly sync' });
    expect((await script(server, token).post('/api/instances', buildInstance({ vmid: 777 }))).status).toBe(201);
    const audit = (await server.client.get('/api/audit')).body as Array<Record<string, unknown>>;
    expect(audit[0]).toMatchObject({
      actor: 'oscar',
      action: 'request',
      target: 'instance 777',
      ip: expect.any(String),
      detail: { method: 'POST', path: '/api/instances', status: 201, token: { id, name: 'nightly sync' } },
    });
    expect(audit.find((e) => e.action === 'token.create')).toMatchObject({ actor: 'oscar', detail: { id, name: 'nightly sync', role: 'operator' } });
    // The token's own entry stands for its creation: no generic request row beside it.
    expect(audit.filter((e) => (e.detail as { path?: string }).path === '/api/tokens')).toEqual([]);
    // An update names its changed fields, as from a browser; the token is named too.
    expect((await script(server, token).put('/api/instances/777', { state: 'testing' })).status).toBe(200);
    const update = ((await server.client.get('/api/audit')).body as Array<Record<string, unknown>>)[0];
    expect(update).toMatchObject({ target: 'instance 777', detail: { method: 'PUT', fields: ['state'], token: { id, name: 'nightly sync' } } });
    expect(JSON.stringify(audit)).not.toContain(token.slice(4));
    // History names the user, as for a browser write.
    const history = (await server.client.get('/api/instances/777/history')).body as Array<{ changed_by: string }>;
    expect(history[0]!.changed_by).toBe('oscar');
  });

  it('records its last use (time, address) at most once a minute', async () => {
    const clock = manualClock(Date.parse('2026-11-22T10:00:00.000Z'));
    const server = await start({ clock });
    const { id, token } = await createToken(server.client, 'viewer');
    const lastUse = () => (server.client.get('/api/tokens').then((r) => r.body.find((t: { id: number }) => t.id === id)));
    await script(server, token).get('/api/instances');
    expect(await lastUse()).toMatchObject({ last_used_at: '2026-11-22T10:00:00.000Z', last_used_ip: expect.stringMatching(/127\.0\.0\.1$/) });
    clock.advance(59_000);
    await script(server, token).get('/api/instances');
    expect((await lastUse()).last_used_at).toBe('2026-11-22T10:00:00.000Z');
    clock.advance(1_000);
    await script(server, token).get('/api/instances');
    expect((await lastUse()).last_used_at).toBe('2026-11-22T10:01:00.000Z');
  });

  it('failures are throttled per peer like failed logins, also in parallel; a valid token from that peer is still served', async () => {
    const server = await start({ clock: manualClock() });
    const { token } = await createToken(server.client, 'viewer');
    const wrong = 'hfp_' + 'B'.repeat(43);
    const answers = await Promise.all(Array.from({ length: 25 }, () => script(server, wrong).get('/api/instances')));
    const counts = answers.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 401: 10, 429: 15 });
    const blocked = await script(server, wrong).get('/api/instances');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // "Throttling never locks a valid credential out."
    expect((await script(server, token).get('/api/instances')).status).toBe(200);
  });
});

describe('managing tokens', () => {
  it('lists one’s own; administrators list everyone’s with ?user=all and revoke any', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer', 'val');
    const mine = await createToken(viewer, 'viewer', { name: 'val token' });
    const admins = await createToken(server.client, 'operator', { name: 'admin token' });
    expect(((await viewer.get('/api/tokens')).body as Array<{ name: string }>).map((t) => t.name)).toEqual(['val token']);
    expect(await viewer.get('/api/tokens?user=all')).toMatchObject({ status: 403, body: { error: 'forbidden' } });
    expect((await viewer.get('/api/tokens?user=everyone')).status).toBe(400);
    const all = (await server.client.get('/api/tokens?user=all')).body as Array<{ name: string; user: { username: string } }>;
    expect(all.map((t) => [t.name, t.user.username])).toEqual([
      ['val token', 'val'],
      ['admin token', 'admin'],
    ]);
    // Someone else's token does not exist for a non-administrator.
    expect(await viewer.delete(`/api/tokens/${admins.id}`)).toMatchObject({ status: 404, body: { error: 'token not found' } });
    expect((await script(server, admins.token).get('/api/instances')).status).toBe(200);
    expect((await server.client.delete(`/api/tokens/${mine.id}`)).status).toBe(204);
    expect((await script(server, mine.token).get('/api/instances')).status).toBe(401);
    expect((await server.client.get('/api/audit')).body.find((e: { action: string }) => e.action === 'token.revoke')).toMatchObject({ actor: 'admin', action: 'token.revoke', subject: { type: 'api_token', id: String(mine.id), name: 'val token' }, summary: 'admin revoked API token “val token” of val', detail: { id: mine.id, name: 'val token' } });
    expect((await server.client.delete('/api/tokens/abc')).status).toBe(400);
    expect((await server.client.delete(`/api/tokens/${mine.id}`)).status).toBe(404);
  });

  it('needs a signed-in browser and the Origin like every other session write', async () => {
    const server = await start();
    expect((await server.anonymous().get('/api/tokens')).status).toBe(401);
    const res = await server.client.post('/api/tokens', { name: 'x', role: 'viewer' }, { origin: 'http://evil.example' });
    expect(res).toMatchObject({ status: 403, body: { error: 'origin mismatch' } });
  });
});
