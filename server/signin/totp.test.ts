import { TOTP } from 'otpauth';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import type { TestClient } from '../../test/helpers/http.js';
import { ADMIN_PASSWORD, logIn, startServer, USER_PASSWORD, type TestServer } from '../../test/helpers/server.js';

// One server for the file, with a clock the tests move: TOTP steps and throttle windows follow it.
const clock = manualClock(Date.parse('2026-11-22T10:00:05.000Z'));
const logLines: string[] = [];
let server: TestServer;
beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
  server = await startServer({ clock, logger: pino({ level: 'trace' }, sink) });
});
afterAll(() => server.stop());

/** The code an authenticator app shows for `secret` at `ms` (RFC 6238 defaults: SHA-1, 6 digits, 30 s). */
const code = (secret: string, ms = clock.now()) => new TOTP({ secret }).generate({ timestamp: ms });
/** The administrator, signed in again: the clock moves past the session's idle time between tests. */
const admin = () => logIn(server.anonymous(), 'admin', ADMIN_PASSWORD);

let serial = 0;
/** An operator with TOTP turned on through the API; returns the secret and recovery codes the person saw. */
async function userWithTotp(): Promise<{ username: string; secret: string; recovery: string[]; browser: TestClient }> {
  const username = `totp-${++serial}`;
  const browser = await server.signIn('operator', username);
  const setup = await browser.post('/api/auth/totp/setup');
  expect(setup.status).toBe(200);
  const confirm = await browser.post('/api/auth/totp/confirm', { code: code(setup.body.secret) });
  expect(confirm.status, confirm.text).toBe(200);
  return { username, secret: setup.body.secret, recovery: confirm.body.recovery_codes, browser };
}

describe('TOTP setup', () => {
  it('hands out a 160-bit base32 secret once, with its otpauth URL and a QR code, and turns on only with a right code', async () => {
    const browser = await server.signIn('viewer', 'setup-person');
    const setup = await browser.post('/api/auth/totp/setup');
    expect(setup.status).toBe(200);
    expect(setup.headers.get('cache-control')).toBe('no-store');
    const { secret, otpauth_url, qr_code } = setup.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(otpauth_url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ secret, algorithm: 'SHA1', digits: '6', period: '30', issuer: 'homefleet' });
    expect(qr_code).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(qr_code.split(',')[1], 'base64').toString()).toMatch(/^<svg[^>]*>.*<\/svg>\s*$/s);

    expect((await browser.get('/api/auth/totp')).body).toEqual({ enabled: false, recovery_codes_left: 0 });
    const wrong = await browser.post('/api/auth/totp/confirm', { code: String((Number(code(secret)) + 1) % 1_000_000).padStart(6, '0') });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0].field).toBe('code');
    expect((await browser.post('/api/auth/totp/confirm', { code: 'abcdef' })).status).toBe(400);

    const confirmed = await browser.post('/api/auth/totp/confirm', { code: code(secret) });
    expect(confirmed.status).toBe(200);
    const codes: string[] = confirmed.body.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c.replace(/-/g, '').length).toBeGreaterThanOrEqual(10);
    expect((await browser.get('/api/auth/totp')).body).toEqual({ enabled: true, recovery_codes_left: 10 });
    // Turned on: a second setup would replace the secret the phone holds.
    expect((await browser.post('/api/auth/totp/setup')).status).toBe(409);
    expect((await browser.post('/api/auth/totp/confirm', { code: code(secret) })).status).toBe(409);
  });
});

describe('signing in with TOTP', () => {
  it('the password alone gives no session and no fleet access; the code completes the sign-in, once', async () => {
    const { username, secret } = await userWithTotp();
    clock.advance(30_000);
    const browser = server.anonymous();
    const first = await browser.post('/api/auth/login', { username, password: USER_PASSWORD });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ second_factor: 'totp', second_factors: ['totp'] });
    const cookies = first.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatch(/^homefleet_pending_dev=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax$/);
    expect((await browser.get('/api/instances')).status).toBe(401);
    expect((await browser.get('/api/auth/session')).status).toBe(401);

    const now = code(secret);
    const second = await browser.post('/api/auth/login/totp', { code: now });
    expect(second.status).toBe(200);
    expect(second.body.user.username).toBe(username);
    expect((await browser.get('/api/instances')).status).toBe(200);

    // The same code a second time (another sign-in within its 30 seconds) is refused.
    const again = server.anonymous();
    expect((await again.post('/api/auth/login', { username, password: USER_PASSWORD })).body).toEqual({ second_factor: 'totp', second_factors: ['totp'] });
    expect((await again.post('/api/auth/login/totp', { code: now })).status).toBe(401);
    // So is the previous step's code (±1 step, but never older than the last one accepted)...
    expect((await again.post('/api/auth/login/totp', { code: code(secret, clock.now() - 30_000) })).status).toBe(401);
    // ...and the next step's code is accepted.
    expect((await again.post('/api/auth/login/totp', { code: code(secret, clock.now() + 30_000) })).status).toBe(200);
    expect((await again.get('/api/instances')).status).toBe(200);

    const audit = (await (await admin()).get('/api/audit?limit=20')).body as { action: string; summary: string; detail: Record<string, unknown> }[];
    expect(audit.find((e) => e.action === 'login.success' && e.summary.startsWith(username))).toMatchObject({
      summary: `${username} signed in with a password and a one-time code from 127.0.0.1`,
      detail: { method: 'totp' },
    });
    expect(audit.find((e) => e.action === 'login.failure')?.summary).toBe(`second factor failed for ${username} from 127.0.0.1`);
  });

  it('a recovery code works once, typed in any case', async () => {
    const { username, recovery } = await userWithTotp();
    const browser = server.anonymous();
    await browser.post('/api/auth/login', { username, password: USER_PASSWORD });
    expect((await browser.post('/api/auth/login/totp', { recovery_code: recovery[3]!.toUpperCase() })).status).toBe(200);
    const again = server.anonymous();
    await again.post('/api/auth/login', { username, password: USER_PASSWORD });
    expect((await again.post('/api/auth/login/totp', { recovery_code: recovery[3] })).status).toBe(401);
    expect((await again.post('/api/auth/login/totp', { recovery_code: recovery[4] })).status).toBe(200);
    expect((await again.get('/api/auth/totp')).body).toEqual({ enabled: true, recovery_codes_left: 8 });
  });

  it('20 parallel wrong codes are throttled like wrong passwords: 5 per username, the rest 429', async () => {
    const { username, secret } = await userWithTotp();
    clock.advance(15 * 60_000); // a fresh throttle window
    const browser = server.anonymous();
    expect((await browser.post('/api/auth/login', { username, password: USER_PASSWORD })).body).toEqual({ second_factor: 'totp', second_factors: ['totp'] });
    const wrong = String((Number(code(secret)) + 500_000) % 1_000_000).padStart(6, '0');
    const answers = await Promise.all(Array.from({ length: 20 }, () => browser.post('/api/auth/login/totp', { code: wrong })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    expect(answers.find((a) => a.status === 429)!.headers.get('retry-after')).toMatch(/^\d+$/);
    // The window is full for this username: the right code and the password are refused alike until it ends.
    expect((await browser.post('/api/auth/login/totp', { code: code(secret) })).status).toBe(429);
    expect((await server.anonymous().post('/api/auth/login', { username, password: USER_PASSWORD })).status).toBe(429);
  });

  it('without the pending cookie, or after 5 minutes, the second step is refused', async () => {
    const { username, secret } = await userWithTotp();
    clock.advance(15 * 60_000);
    expect((await server.anonymous().post('/api/auth/login/totp', { code: code(secret) })).status).toBe(401);
    const browser = server.anonymous();
    await browser.post('/api/auth/login', { username, password: USER_PASSWORD });
    clock.advance(5 * 60_000 + 1000);
    const late = await browser.post('/api/auth/login/totp', { code: code(secret) });
    expect(late.status).toBe(401);
    expect(late.body).toEqual({ error: 'the sign-in has expired; enter your password again' });
  });

  it('removing TOTP needs the password; then the password alone signs in again', async () => {
    const { username, browser } = await userWithTotp();
    const plain = await browser.request('DELETE', '/api/auth/totp', { password: 'not the password' });
    expect(plain.status).toBe(401);
    expect((await browser.request('DELETE', '/api/auth/totp', { password: USER_PASSWORD })).status).toBe(204);
    const res = await server.anonymous().post('/api/auth/login', { username, password: USER_PASSWORD });
    expect(res.body.user?.username).toBe(username);
  });

  it('an administrator clears another user’s second factor, audited; the user is signed out', async () => {
    const { username, browser } = await userWithTotp();
    const administrator = await admin();
    const users = (await administrator.get('/api/users')).body as { id: number; username: string }[];
    const id = users.find((u) => u.username === username)!.id;
    // The Users page reads who has which factor: administrators only, never a secret.
    expect((await browser.get('/api/users/second-factors')).status).toBe(403);
    const factors = async () => ((await administrator.get('/api/users/second-factors')).body as { user_id: number }[]).find((f) => f.user_id === id);
    expect(await factors()).toEqual({ user_id: id, totp: true, passkeys: 0, oidc: false });
    expect((await browser.request('DELETE', `/api/users/${id}/second-factor`)).status).toBe(403);
    expect((await administrator.request('DELETE', `/api/users/${id}/second-factor`)).status).toBe(204);
    expect(await factors()).toEqual({ user_id: id, totp: false, passkeys: 0, oidc: false });
    expect((await browser.get('/api/instances')).status).toBe(401);
    const signedIn = await logIn(server.anonymous(), username, USER_PASSWORD);
    expect((await signedIn.get('/api/auth/totp')).body).toEqual({ enabled: false, recovery_codes_left: 0 });
    const entry = ((await administrator.get('/api/audit?limit=5')).body as { action: string; summary: string }[]).find((e) => e.action === 'user.reset_second_factor');
    expect(entry?.summary).toBe(`admin cleared the second factors of ${username} (TOTP)`);
  });

  it('the Users page’s list names every account once, with its TOTP, its number of passkeys and its provider link', async () => {
    const { username } = await userWithTotp();
    await server.signIn('viewer', 'factors-keys');
    await server.signIn('viewer', 'factors-none');
    const idOf = (name: string) => server.accounts.repo.byUsername(name)!.id;
    const [totpId, keysId, noneId] = [idOf(username), idOf('factors-keys'), idOf('factors-none')];
    const passkey = server.db.prepare("INSERT INTO passkeys (account_id, credential_id, public_key, name, created_at) VALUES (?, ?, x'00', 'key', '2026-11-22T10:00:00Z')");
    passkey.run(keysId, 'credential-a');
    passkey.run(keysId, 'credential-b');
    passkey.run(totpId, 'credential-c');
    server.db.prepare("INSERT INTO oidc_identities (account_id, issuer, subject, created_at) VALUES (?, 'https://id.example', 'sub-1', '2026-11-22T10:00:00Z')").run(keysId);
    const list = (await (await admin()).get('/api/users/second-factors')).body as { user_id: number }[];
    expect(list.map((f) => f.user_id)).toEqual(server.accounts.repo.list().map((a) => a.id));
    expect(list.filter((f) => [totpId, keysId, noneId].includes(f.user_id))).toEqual([
      { user_id: totpId, totp: true, passkeys: 1, oidc: false },
      { user_id: keysId, totp: false, passkeys: 2, oidc: true },
      { user_id: noneId, totp: false, passkeys: 0, oidc: false },
    ]);
  });

  it('the TOTP secret and recovery codes are in no API read, audit entry or log line', async () => {
    const { secret, recovery, browser } = await userWithTotp();
    const administrator = await admin();
    const reads = [
      (await browser.get('/api/auth/totp')).text,
      (await browser.get('/api/auth/session')).text,
      (await administrator.get('/api/users')).text,
      (await administrator.get('/api/users/second-factors')).text,
      (await administrator.get('/api/audit?limit=1000')).text,
    ].join('\n');
    const logs = logLines.join('');
    for (const value of [secret, ...recovery, ...recovery.map((r) => r.replace('-', ''))]) {
      expect(reads).not.toContain(value);
      expect(logs).not.toContain(value);
    }
    // Only hashes of recovery codes are stored.
    const stored = JSON.stringify(server.db.prepare('SELECT * FROM recovery_codes').all());
    for (const value of recovery) expect(stored).not.toContain(value.replace('-', ''));
  });
});

describe('FLEET_REQUIRE_2FA=administrators', () => {
  it('an administrator without a second factor may only set one up; a viewer is not asked', async () => {
    const gated = await startServer({ clock, config: { require2fa: 'administrators' } });
    try {
      const admin = gated.client;
      expect((await admin.get('/api/instances')).status).toBe(403);
      expect((await admin.get('/api/instances')).body).toEqual({ error: 'second factor required' });
      expect((await admin.get('/api/users')).status).toBe(403);
      expect((await admin.post('/api/tokens', { name: 'x', role: 'viewer' })).status).toBe(403);
      expect((await admin.get('/api/auth/session')).body).toMatchObject({ second_factor_required: true });
      const viewer = await gated.signIn('viewer');
      expect((await viewer.get('/api/instances')).status).toBe(200);
      expect((await viewer.get('/api/auth/session')).body).toMatchObject({ second_factor_required: false });

      const setup = await admin.post('/api/auth/totp/setup');
      expect(setup.status).toBe(200);
      expect((await admin.post('/api/auth/totp/confirm', { code: code(setup.body.secret) })).status).toBe(200);
      expect((await admin.get('/api/instances')).status).toBe(200);
      expect((await admin.get('/api/auth/session')).body).toMatchObject({ second_factor_required: false });
    } finally {
      await gated.stop();
    }
  });
});
