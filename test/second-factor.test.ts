import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WINDOW_MS } from '../server/access/throttle.js';
import { ensureBuilt } from './helpers/build.js';
import { nextWindowClock } from './helpers/clock.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';
import { softPasskey } from './helpers/webauthn.js';

// The second step of a password sign-in against the built server: what a stolen password, replayed
// codes, a flood of guesses and malformed bodies get. Codes are computed from the secret in real time.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-2fa-'));
const SETUP_TOKEN = 'second-factor-setup-token';
let server: Headless;
let base: string;
let admin: Record<string, string>;
// The server's clock, one second into a throttle window (nextWindowClock): its failures all count in that window.
const serverClock = nextWindowClock(WINDOW_MS);

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const code = (secret: string, at = serverClock.now()) => new TOTP({ secret }).generate({ timestamp: at });
const cookieOf = (res: { headers: { 'set-cookie'?: string[] } }) => res.headers['set-cookie']![0]!.split(';')[0]!;

/** Turns TOTP on for the session `browser` holds; returns the secret and recovery codes. */
async function turnOnTotp(browser: Record<string, string>): Promise<{ secret: string; recovery: string[]; at: number }> {
  const setup = await rawRequest(base, 'POST', '/api/auth/totp/setup', browser);
  expect(setup.status).toBe(200);
  const at = serverClock.now();
  const confirm = await rawRequest(base, 'POST', '/api/auth/totp/confirm', browser, { code: code(setup.body.secret, at) });
  expect(confirm.status).toBe(200);
  return { secret: setup.body.secret, recovery: confirm.body.recovery_codes, at };
}

/** A password login of `username` that stops at the second step: the pending cookie. */
async function passwordStep(username: string, password: string): Promise<Record<string, string>> {
  const res = await rawRequest(base, 'POST', '/api/auth/login', { origin: base }, { username, password });
  expect([res.status, res.body]).toEqual([200, { second_factor: 'totp', second_factors: ['totp'] }]);
  expect(res.headers['set-cookie']).toHaveLength(1);
  expect(res.headers['set-cookie']![0]).toMatch(/^homefleet_pending_dev=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax$/);
  return { origin: base, cookie: cookieOf(res) };
}

describe('TOTP second step (built server)', () => {
  it('the password alone reaches nothing; a code works once; malformed bodies are 400s; 20 parallel wrong codes and passkey guesses are throttled like logins', { timeout: 40_000 }, async () => {
    server = await startHeadless({ DB_PATH: path.join(dir, 'homefleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' }, { clockShiftMs: serverClock.shiftMs });
    base = server.url;
    admin = { origin: base, cookie: await setUpAdmin(base, SETUP_TOKEN) };
    const root = await turnOnTotp(admin);

    const pending = await passwordStep('root', 'headless-password');
    expect((await rawRequest(base, 'GET', '/api/instances', pending)).status).toBe(401);
    expect((await rawRequest(base, 'GET', '/api/auth/session', pending)).status).toBe(401);
    // Bad input: a 400 naming the problem, never a 500, and no attempt used up.
    for (const body of [{}, { code: 123456 }, { code: '12345a' }, { code: '1'.repeat(2000) }, { code: '123456', recovery_code: 'aaaaa-bbbbb' }, { recovery_code: ['x'] }, [], 'null']) {
      const res = await rawRequest(base, 'POST', '/api/auth/login/totp', pending, body);
      expect([JSON.stringify(body).slice(0, 40), res.status]).toEqual([JSON.stringify(body).slice(0, 40), 400]);
    }
    expect((await rawRequest(base, 'POST', '/api/auth/login/totp', pending, { code: '1'.repeat(5000) })).status).toBe(413);
    expect((await rawRequest(base, 'POST', '/api/auth/login/totp', { ...pending, 'content-type': 'text/plain' }, 'code=123456')).status).toBeLessThan(500);
    // Without the browser's Origin (a cross-site form), refused before any code is looked at.
    expect((await rawRequest(base, 'POST', '/api/auth/login/totp', { cookie: pending.cookie! }, { code: code(root.secret, root.at + 30_000) })).status).toBe(403);

    // The code the confirmation used was accepted once; the next step's code signs in, once.
    expect((await rawRequest(base, 'POST', '/api/auth/login/totp', pending, { code: code(root.secret, root.at) })).status).toBe(401);
    const next = code(root.secret, root.at + 30_000);
    const done = await rawRequest(base, 'POST', '/api/auth/login/totp', pending, { code: next });
    expect(done.status).toBe(200);
    const session = { origin: base, cookie: done.headers['set-cookie']!.find((c) => c.startsWith('homefleet_session'))!.split(';')[0]! } as Record<string, string>;
    expect((await rawRequest(base, 'GET', '/api/instances', session)).status).toBe(200);
    expect((await rawRequest(base, 'POST', '/api/auth/login/totp', pending, { code: next })).status).toBe(401);
    const again = await passwordStep('root', 'headless-password');
    expect((await rawRequest(base, 'POST', '/api/auth/login/totp', again, { code: next })).status).toBe(401);

    // A passkey signs in without the password or the code (it counts as both factors); its answer works once.
    const port = new URL(base).port;
    const localOrigin = `http://localhost:${port}`;
    const atLocalhost: Record<string, string> = { ...session, host: `localhost:${port}`, origin: localOrigin };
    const key = softPasskey();
    const registration = await rawRequest(base, 'POST', '/api/auth/passkeys/register/options', atLocalhost, { password: 'headless-password' });
    const added = await rawRequest(base, 'POST', '/api/auth/passkeys/register/verify', atLocalhost, { name: 'Laptop', response: key.register(registration.body, localOrigin) });
    expect([added.status, added.body.name]).toEqual([201, 'Laptop']);
    const anonymous = { host: `localhost:${port}`, origin: localOrigin };
    const challenge = await rawRequest(base, 'POST', '/api/auth/passkeys/options', anonymous);
    const withChallenge = { ...anonymous, cookie: cookieOf(challenge) };
    const assertion = key.assert(challenge.body, anonymous.origin);
    const byPasskey = await rawRequest(base, 'POST', '/api/auth/passkeys/verify', withChallenge, { response: assertion });
    expect([byPasskey.status, byPasskey.body.user?.username]).toEqual([200, 'root']);
    expect(byPasskey.headers['set-cookie']?.some((c) => c.startsWith('homefleet_session'))).toBe(true);
    // Replayed with the same challenge cookie: each challenge signs in once.
    expect((await rawRequest(base, 'POST', '/api/auth/passkeys/verify', withChallenge, { response: assertion })).status).toBe(401);
    // The passkey sign-in ended root's other session ("one browser session per account"): go on with the new one.
    const bySession = { origin: base, cookie: byPasskey.headers['set-cookie']!.find((c) => c.startsWith('homefleet_session'))!.split(';')[0]! };
    Object.assign(session, bySession);
    atLocalhost.cookie = bySession.cookie;

    // Another account, so the flood meets a fresh per-username window: 5 wrong codes answered, the rest 429.
    const made = await rawRequest(base, 'POST', '/api/users', session, { username: 'flooded', display_name: 'Flooded', role: 'viewer' });
    const first = await rawRequest(base, 'POST', '/api/auth/login', { origin: base }, { username: 'flooded', password: made.body.temporary_password });
    const changed = await rawRequest(base, 'POST', '/api/auth/password', { origin: base, cookie: cookieOf(first) }, { current_password: made.body.temporary_password, new_password: 'flooded-password' });
    expect(changed.status).toBe(204);
    const flooded = await turnOnTotp({ origin: base, cookie: cookieOf(changed) });
    const target = await passwordStep('flooded', 'flooded-password');
    const wrong = String((Number(code(flooded.secret)) + 500_000) % 1_000_000).padStart(6, '0');
    const answers = await Promise.all(Array.from({ length: 20 }, () => rawRequest(base, 'POST', '/api/auth/login/totp', target, { code: wrong })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    // The window is full: the right code and the right password wait alike.
    expect((await rawRequest(base, 'POST', '/api/auth/login/totp', target, { code: code(flooded.secret, flooded.at + 30_000) })).status).toBe(429);
    expect((await rawRequest(base, 'POST', '/api/auth/login', { origin: base }, { username: 'flooded', password: 'flooded-password' })).status).toBe(429);

    // A passkey attempt counts in the same per-address window: the wrong codes and the replay above used 8 of its 10.
    const bogus = { response: { id: 'not-a-registered-key', type: 'public-key', response: { clientDataJSON: 'e30' } } };
    const passkeyAnswers: number[] = [];
    for (let i = 0; i < 3; i++) passkeyAnswers.push((await rawRequest(base, 'POST', '/api/auth/passkeys/verify', { origin: base }, bogus)).status);
    expect(passkeyAnswers).toEqual([401, 401, 429]);

    // Passkey routes with bad input: 400/404, never a 500.
    const byIp = await rawRequest(base, 'POST', '/api/auth/passkeys/register/options', session, { password: 'headless-password' });
    expect([byIp.status, byIp.body.error]).toEqual([400, expect.stringMatching(/^passkeys need a host name/)]);
    const options = await rawRequest(base, 'POST', '/api/auth/passkeys/register/options', atLocalhost, { password: 'headless-password' });
    expect([options.status, options.body.rp]).toEqual([200, { name: 'homefleet', id: 'localhost' }]);
    const garbage = { name: 'Laptop', response: { id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'AAAA' } } };
    expect((await rawRequest(base, 'POST', '/api/auth/passkeys/register/verify', atLocalhost, garbage)).body).toEqual({ error: 'the passkey could not be verified; try again' });
    expect((await rawRequest(base, 'POST', '/api/auth/passkeys/register/verify', atLocalhost, garbage)).body).toEqual({ error: 'no passkey registration is waiting; start again' });
    for (const [method, url, body, status] of [
      ['POST', '/api/auth/passkeys/register/verify', { name: '', response: garbage.response }, 400],
      ['POST', '/api/auth/passkeys/register/verify', { name: 'x', response: 'y' }, 400],
      ['PATCH', '/api/auth/passkeys/999', { name: 'Desk' }, 404],
      ['PATCH', '/api/auth/passkeys/1', { name: 'bad\u0001name' }, 400],
      ['PATCH', '/api/auth/passkeys/1', { name: 'x'.repeat(61) }, 400],
      ['DELETE', '/api/auth/passkeys/abc', undefined, 400],
      ['DELETE', '/api/users/999/second-factor', undefined, 404],
    ] as const) {
      expect([method, url, (await rawRequest(base, method, url, atLocalhost, body)).status]).toEqual([method, url, status]);
    }

    const stopped = await server.stop();
    const output = `${stopped.stdout}${stopped.stderr}`;
    for (const secret of [root.secret, flooded.secret, ...root.recovery, ...flooded.recovery]) expect(output).not.toContain(secret);
    expect(output).toContain('"msg":"request"');
  });
});
