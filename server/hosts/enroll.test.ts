import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { LIMITS } from '../access/throttle.js';
import { bearer, enroll, heldPosts, enrolledHost, enrollmentToken, heartbeat, startHostServer } from '../../test/helpers/hosts.js';
import { rawRequest } from '../../test/helpers/raw.js';
import type { TestServer } from '../../test/helpers/server.js';
import { installNotes } from './routes.js';

const INVALID = { error: 'invalid token' };
const TOKEN = /^hfe_[A-Za-z0-9_-]{43}$/;

let server: TestServer;
let clock: ReturnType<typeof manualClock>;
beforeEach(async () => {
  clock = manualClock();
  server = await startHostServer({ clock });
});
afterEach(() => server.stop());

describe('enrollment tokens', () => {
  it('are created once with the one-line install command, and listed without a secret', async () => {
    const res = await server.client.post('/api/hosts/enrollment-tokens', { name: 'rack', expires_in_s: 3600, max_uses: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      token: expect.stringMatching(TOKEN),
      expires_at: '2026-11-22T11:00:00.000Z',
      max_uses: 2,
      host_id: null,
      // The root form: a Proxmox node has no sudo.
      install_command: `curl -fsSL ${server.baseUrl}/install/agent.sh | bash -s -- --token ${res.body.token}`,
      // Agents may use HTTP here (FLEET_AGENT_ALLOW_HTTP), but the address is this machine's own.
      install_notes: [
        `The command names ${server.baseUrl.slice('http://'.length)}, which on the hypervisor is the hypervisor itself. Open this page at an address the hypervisor can reach (this server's LAN name or address), or set FLEET_PUBLIC_URL.`,
      ],
    });
    const list = await server.client.get('/api/hosts/enrollment-tokens');
    expect(list.body).toEqual([
      {
        id: res.body.id,
        name: 'rack',
        created_by: 'admin',
        created_at: '2026-11-22T10:00:00.000Z',
        expires_at: '2026-11-22T11:00:00.000Z',
        max_uses: 2,
        uses: 0,
        revoked_at: null,
        state: 'active',
        host_id: null,
      },
    ]);
    expect(list.text).not.toContain(res.body.token);
    // Only the SHA-256 is stored.
    const stored = JSON.stringify(server.db.prepare('SELECT * FROM enrollment_tokens').all());
    expect(stored).not.toContain(res.body.token);
    expect(JSON.stringify(server.hosts.repo.listEnrollmentTokens())).not.toContain(res.body.token);
  });

  it('defaults to one use for a day', async () => {
    const res = await server.client.post('/api/hosts/enrollment-tokens', {});
    expect(res.body).toMatchObject({ max_uses: 1, expires_at: '2026-11-23T10:00:00.000Z' });
  });

  it('refuses a lifetime under 60 s or over 30 days, and bad counts, with 400', async () => {
    for (const body of [{ expires_in_s: 59 }, { expires_in_s: 2592001 }, { max_uses: 0 }, { expires_in_s: 'soon' }]) {
      const res = await server.client.post('/api/hosts/enrollment-tokens', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors).toHaveLength(1);
    }
  });

  it('adds the certificate pin to the install command when the controller has a self-signed certificate', async () => {
    await server.stop();
    server = await startHostServer({ clock, config: { tlsFingerprint: 'AbC123+/xyz=' } });
    const res = await server.client.post('/api/hosts/enrollment-tokens', {});
    expect(res.body.install_command).toBe(
      `curl -fsSL --insecure --pinnedpubkey sha256//AbC123+/xyz= ${server.baseUrl}/install/agent.sh | bash -s -- --token ${res.body.token} --fingerprint AbC123+/xyz=`,
    );
  });

  it('say that a plain-HTTP server refuses agents, naming HTTPS and FLEET_AGENT_ALLOW_HTTP', async () => {
    await server.stop();
    server = await startHostServer({ clock, config: { agentAllowHttp: false } });
    const res = await server.client.post('/api/hosts/enrollment-tokens', {});
    expect(res.body.install_notes).toHaveLength(2);
    expect(res.body.install_notes[0]).toMatch(/^This server speaks plain HTTP .*403 "https required".*HOST=0\.0\.0\.0.*FLEET_PUBLIC_URL.*FLEET_AGENT_ALLOW_HTTP=true\.$/);
    // The installer indeed stops there.
    const enroll = await server.anonymous().post('/api/agent/enroll', {}, { authorization: `Bearer ${res.body.token}` });
    expect([enroll.status, enroll.body]).toEqual([403, { error: 'https required' }]);
  });

  it('have no notes for an HTTPS address other machines can reach', () => {
    expect(installNotes('https://fleet.example.lan', false)).toEqual([]);
    expect(installNotes('https://192.168.1.20:3000', false)).toEqual([]);
    expect(installNotes('http://192.168.1.20:3000', true)).toEqual([]);
    expect(installNotes('https://[::1]:3000', false)).toEqual([expect.stringMatching(/^The command names \[::1\]:3000, /)]);
    expect(installNotes('https://127.0.0.2', false)).toHaveLength(1);
    expect(installNotes('https://localhost:3000', false)).toHaveLength(1);
  });

  it('are audited without the token', async () => {
    const token = await enrollmentToken(server, { name: 'audited' });
    const audit = await server.client.get('/api/audit');
    expect(audit.body.find((e: { action: string }) => e.action === 'enrollment_token.create')).toMatchObject({ actor: 'admin', detail: { name: 'audited' } });
    expect(audit.text).not.toContain(token);
  });
});

describe('POST /api/agent/enroll', () => {
  it('creates a host and a host token bound to the machine id', async () => {
    const token = await enrollmentToken(server);
    const res = await enroll(server.anonymous(), token, { hostname: 'pve1', machine_id: 'abc123', agent_version: '1.0.0' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      host_id: expect.any(Number),
      host_token: expect.stringMatching(/^hfh_[A-Za-z0-9_-]{43}$/),
      heartbeat_interval_s: 30,
      manifest_public_key: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/),
    });
    const host = await server.client.get(`/api/hosts/${res.body.host_id}`);
    expect(host.body).toMatchObject({ hostname: 'pve1', machine_id: 'abc123', status: 'offline', agent_version: '1.0.0', last_heartbeat_at: null });
    expect(JSON.stringify(server.db.prepare('SELECT * FROM host_tokens').all())).not.toContain(res.body.host_token);
    expect((await heartbeat(server, res.body.host_token)).status).toBe(200);
  });

  it('refuses wrong, expired, used-up and revoked enrollment tokens with the same 401', async () => {
    const anon = server.anonymous();
    const wrong = 'hfe_' + 'A'.repeat(43);
    expect(await enroll(anon, wrong)).toMatchObject({ status: 401, body: INVALID });

    const used = await enrollmentToken(server);
    expect((await enroll(anon, used)).status).toBe(201);
    expect(await enroll(anon, used)).toMatchObject({ status: 401, body: INVALID });

    const revoked = await server.client.post('/api/hosts/enrollment-tokens', {});
    expect((await server.client.delete(`/api/hosts/enrollment-tokens/${revoked.body.id}`)).status).toBe(204);
    expect(await enroll(anon, revoked.body.token)).toMatchObject({ status: 401, body: INVALID });

    const expiring = await enrollmentToken(server, { expires_in_s: 60 });
    clock.advance(60_000);
    expect(await enroll(anon, expiring)).toMatchObject({ status: 401, body: INVALID });

    const states = (await server.client.get('/api/hosts/enrollment-tokens')).body.map((t: { state: string }) => t.state).sort();
    expect(states).toEqual(['expired', 'revoked', 'used_up']);
  });

  it('refuses tokens of another kind, malformed headers and no token with the same 401', async () => {
    const anon = server.anonymous();
    const { host_token } = await enrolledHost(server);
    const good = await enrollmentToken(server);
    for (const authorization of [`Bearer ${host_token}`, 'Bearer hfp_' + 'a'.repeat(43), `Basic ${good}`, good, '']) {
      const res = await anon.post('/api/agent/enroll', { hostname: 'x', machine_id: 'm-x', agent_version: '1.0.0' }, { authorization });
      expect(res, authorization).toMatchObject({ status: 401, body: INVALID });
    }
    // The good token was not spent by any of those.
    expect((await enroll(anon, good)).status).toBe(201);
  });

  it('accepts max_uses enrollments and no more, also when they race', async () => {
    const token = await enrollmentToken(server, { max_uses: 2 });
    const results = await Promise.all(Array.from({ length: 8 }, () => enroll(server.anonymous(), token)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 401, 401, 401, 401, 401, 401]);
    expect((await server.client.get('/api/hosts')).body).toHaveLength(2);
  });

  it('a token checked at the door is checked again when used: slow bodies racing for the last use get one 201', async () => {
    const token = await enrollmentToken(server, { max_uses: 1 });
    // Every request passes the token check on its headers, then waits for its body: the use must be
    // taken in the transaction that creates the host, not at the door.
    const bodies = Array.from({ length: 4 }, (_, i) => ({ hostname: `slow${i}`, machine_id: `slow-${i}`, agent_version: '1.0.0' }));
    const statuses = (await heldPosts(server.baseUrl, '/api/agent/enroll', bearer(token), bodies)).map((r) => r.status);
    expect(statuses.sort()).toEqual([201, 401, 401, 401]);
  });

  it('refuses a machine id that is already enrolled with 409, without spending the token', async () => {
    await enrolledHost(server, { machine_id: 'same-machine' });
    const token = await enrollmentToken(server);
    const res = await enroll(server.anonymous(), token, { machine_id: 'same-machine' });
    expect(res).toMatchObject({ status: 409, body: { error: 'machine already enrolled' } });
    expect((await server.client.get('/api/hosts/enrollment-tokens')).body[0]).toMatchObject({ uses: 0, state: 'active' });
  });

  it('re-binds an enrolled machine id only with a re-bind token made for its host: same host, new token, old token refused', async () => {
    const first = await enrolledHost(server, { machine_id: 'rebind-me' });
    const made = await server.client.post('/api/hosts/enrollment-tokens', { host_id: first.host_id, name: 'rebind pve1' });
    expect(made).toMatchObject({ status: 201, body: { host_id: first.host_id, max_uses: 1 } });
    expect((await server.client.get(`/api/hosts/${first.host_id}`)).body.allow_rebind).toBe(true);
    expect((await server.client.get('/api/hosts/enrollment-tokens')).body[0]).toMatchObject({ id: made.body.id, host_id: first.host_id });
    const again = await enroll(server.anonymous(), made.body.token, { machine_id: 'rebind-me', hostname: 'pve1-new' });
    expect(again.status).toBe(201);
    expect(again.body.host_id).toBe(first.host_id);
    expect(await heartbeat(server, first.host_token)).toMatchObject({ status: 401, body: INVALID });
    expect((await heartbeat(server, again.body.host_token, { hostname: 'pve1-new' })).status).toBe(200);
    // The re-bind token is used up; an ordinary token still cannot re-bind.
    expect((await server.client.get(`/api/hosts/${first.host_id}`)).body.allow_rebind).toBe(false);
    expect((await enroll(server.anonymous(), made.body.token, { machine_id: 'rebind-me' })).status).toBe(401);
    expect((await enroll(server.anonymous(), await enrollmentToken(server), { machine_id: 'rebind-me' })).status).toBe(409);
    const audit = server.db.prepare("SELECT detail FROM audit_log WHERE action = 'enrollment_token.create' ORDER BY id").pluck().all() as string[];
    expect(JSON.parse(audit[1]!)).toMatchObject({ host_id: first.host_id });
  });

  it('a re-bind token enrolls no other machine, and is not made for a missing or removed host', async () => {
    const target = await enrolledHost(server, { machine_id: 'target' });
    const other = await enrolledHost(server, { machine_id: 'other' });
    const rebind = (await server.client.post('/api/hosts/enrollment-tokens', { host_id: target.host_id })).body.token as string;
    for (const machine_id of ['other', 'brand-new']) {
      expect(await enroll(server.anonymous(), rebind, { machine_id })).toMatchObject({ status: 409, body: { error: 'this enrollment token re-binds another machine' } });
    }
    expect((await server.client.get('/api/hosts/enrollment-tokens')).body.find((t: { host_id: number }) => t.host_id === target.host_id)).toMatchObject({ uses: 0 });
    expect((await server.client.post('/api/hosts/enrollment-tokens', { host_id: 9999 })).status).toBe(404);
    expect(await server.client.post('/api/hosts/enrollment-tokens', { host_id: target.host_id, max_uses: 2 })).toMatchObject({
      status: 400,
      body: { errors: [{ field: 'max_uses', message: 'a re-bind token (host_id) is used once: max_uses must be 1' }] },
    });
    expect((await server.client.delete(`/api/hosts/${other.host_id}?force=true`)).status).toBe(200);
    expect(await server.client.post('/api/hosts/enrollment-tokens', { host_id: other.host_id })).toMatchObject({ status: 409, body: { error: 'host is deleted' } });
    // The allowance that any token could use is gone, with a pointer to what replaced it.
    const patched = await server.client.patch(`/api/hosts/${target.host_id}`, { allow_rebind: true });
    expect(patched.status).toBe(400);
    expect(patched.body.errors[0]).toMatchObject({ field: 'allow_rebind' });
  });

  it('rotating a leaked host token: revoke-token stops it at once; the machine enrolls again with a re-bind token, not with any token', async () => {
    const host = await enrolledHost(server, { machine_id: 'leaky' });
    expect((await server.client.post(`/api/hosts/${host.host_id}/revoke-token`)).status).toBe(204);
    expect(await heartbeat(server, host.host_token)).toMatchObject({ status: 401, body: INVALID });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.allow_rebind).toBe(false);
    expect(await enroll(server.anonymous(), await enrollmentToken(server), { machine_id: 'leaky' })).toMatchObject({ status: 409, body: { error: 'machine already enrolled' } });
    const again = await enroll(server.anonymous(), await enrollmentToken(server, { host_id: host.host_id }), { machine_id: 'leaky' });
    expect(again.status).toBe(201);
    expect(again.body.host_id).toBe(host.host_id);
  });

  it('validates the body with 400 once the token is good', async () => {
    const token = await enrollmentToken(server);
    const res = await server.anonymous().post('/api/agent/enroll', { hostname: 'bad host', machine_id: '', agent_version: 'x' }, bearer(token));
    expect(res.status).toBe(400);
    expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))].sort()).toEqual(['agent_version', 'hostname', 'machine_id']);
  });
});

describe('credentials stay in their lane', () => {
  it('a session cookie or a personal token never works on /api/agent/*', async () => {
    // server.client carries the administrator's session cookie.
    for (const path of ['/api/agent/enroll', '/api/agent/heartbeat', '/api/agent/receipts/x']) {
      expect(await server.client.post(path, {})).toMatchObject({ status: 401, body: INVALID });
      expect(await server.client.post(path, {}, bearer('hfp_' + 'b'.repeat(43)))).toMatchObject({ status: 401, body: INVALID });
    }
  });

  it('an agent token on a management route is 401, even beside a valid session cookie', async () => {
    const host = await enrolledHost(server);
    const enrollment = await enrollmentToken(server);
    expect((await server.client.get('/api/hosts')).status).toBe(200);
    for (const token of [host.host_token, enrollment, 'hfr_' + 'c'.repeat(43)]) {
      for (const path of ['/api/hosts', '/api/instances', '/api/auth/session']) {
        expect(await server.client.get(path, bearer(token)), `${path} ${token.slice(0, 4)}`).toMatchObject({
          status: 401,
          body: INVALID,
        });
      }
      expect(await server.anonymous().get('/api/hosts', bearer(token))).toMatchObject({ status: 401, body: { error: 'invalid token' } });
    }
  });

  it('plain HTTP is refused on the authenticated agent routes without FLEET_AGENT_ALLOW_HTTP', async () => {
    await server.stop();
    server = await startHostServer({ clock, config: { agentAllowHttp: false } });
    const token = await enrollmentToken(server);
    for (const path of ['/api/agent/enroll', '/api/agent/heartbeat', '/api/agent/receipts/x']) {
      expect(await server.anonymous().post(path, {}, bearer(token))).toMatchObject({ status: 403, body: { error: 'https required' } });
    }
    // A forwarded scheme from an untrusted peer changes nothing.
    expect((await server.anonymous().post('/api/agent/enroll', {}, { ...bearer(token), 'x-forwarded-proto': 'https' })).status).toBe(403);
    // The public release files are served on whatever the server speaks.
    expect((await server.anonymous().get('/api/agent/releases/manifest.json')).status).toBe(200);
  });

  it('accepts agents behind a trusted TLS proxy', async () => {
    await server.stop();
    server = await startHostServer({ clock, config: { agentAllowHttp: false, trustProxy: 'loopback' } });
    const token = await enrollmentToken(server);
    expect((await enroll(server.anonymous(), token)).status).toBe(403);
    const viaProxy = await server.anonymous().post(
      '/api/agent/enroll',
      { hostname: 'pve9', machine_id: 'm-proxy', agent_version: '1.0.0' },
      { ...bearer(token), 'x-forwarded-proto': 'https' },
    );
    expect(viaProxy.status).toBe(201);
  });

  it('throttles failed agent authentications per peer address, persistently, with 429', async () => {
    const anon = server.anonymous();
    const good = await enrollmentToken(server);
    for (let i = 0; i < LIMITS['agent.ip']; i++) expect((await enroll(anon, 'hfe_' + 'Z'.repeat(43))).status).toBe(401);
    const refused = await enroll(anon, good);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Kept in the database: the count is there for a restarted server too.
    expect(server.db.prepare("SELECT failures FROM throttle WHERE scope = 'agent.ip'").pluck().get()).toBe(LIMITS['agent.ip']);
    clock.advance(15 * 60 * 1000);
    expect((await enroll(anon, good)).status).toBe(201);
  });
});

describe('bad input never crashes the server', () => {
  it('answers 4xx to odd bodies, paths and types on every hosts route', async () => {
    const host = await enrolledHost(server);
    const anon = server.anonymous();
    const odd: unknown[] = [null, [], 'text', 42, { guests: null }, { guests: [null] }, { guests: [{ vmid: 1e300, type: 'qemu' }] }, { started_at: '2026-02-30T99:99:99Z' }];
    for (const body of odd) {
      clock.advance(30_000); // one heartbeat interval each: more would be refused with 429 before the body is read
      const res = await anon.request('POST', '/api/agent/heartbeat', JSON.stringify(body), bearer(host.host_token));
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await anon.post('/api/agent/enroll', 'hostname=x', { ...bearer(await enrollmentToken(server)), 'content-type': 'application/x-www-form-urlencoded' })).status).toBe(400);
    expect((await anon.post('/api/agent/receipts/%E0%A4%A', undefined, bearer('hfr_' + 'd'.repeat(43)))).status).toBeLessThan(500);
    expect((await server.client.get('/api/hosts/abc')).status).toBe(400);
    expect((await server.client.get('/api/hosts/99999')).status).toBe(404);
    expect((await server.client.patch(`/api/hosts/${host.host_id}`, {})).status).toBe(400);
    expect((await server.client.patch(`/api/hosts/${host.host_id}`, { sync_registry: 'yes' })).status).toBe(400);
    expect((await server.client.post(`/api/hosts/${host.host_id}/drift/apply`, {})).status).toBe(400);
    expect((await server.client.post(`/api/hosts/${host.host_id}/drift/apply`, { items: [{ vmid: 'x' }] })).status).toBe(400);
    expect((await server.client.delete('/api/hosts/enrollment-tokens/12345')).status).toBe(404);
    expect((await server.client.post('/api/hosts/enrollment-tokens', { name: 'x'.repeat(101) })).status).toBe(400);
    // The Host header ends up in a shell command: a Host that is not one of the server's names is 421.
    const evil = { host: 'evil.example;touch$IFS/tmp/x', cookie: server.client.cookieHeader(), origin: server.baseUrl };
    expect((await rawRequest(server.baseUrl, 'POST', '/api/hosts/enrollment-tokens', evil, {})).status).toBe(421);
    expect((await rawRequest(server.baseUrl, 'GET', '/install/agent.sh', { host: "x'$(id)'" })).status).toBe(421);
    const fine = await rawRequest(server.baseUrl, 'GET', '/install/agent.sh', { host: 'localhost:8443' });
    expect(fine.body).toContain('\nHOMEFLEET_SERVER_DEFAULT=http://localhost:8443\n');
    // Still healthy.
    clock.advance(30_000);
    expect((await heartbeat(server, host.host_token)).status).toBe(200);
  });
});
