import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WINDOW_MS } from '../server/access/throttle.js';
import { ensureBuilt } from './helpers/build.js';
import { nextWindowClock } from './helpers/clock.js';
import { sendBytes } from './helpers/built-server.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest, type RawResponse } from './helpers/raw.js';
import { softPasskey } from './helpers/webauthn.js';

// Issue 34, against the built server with FLEET_REQUIRE_2FA=all: an administrator whose only second
// factor is a passkey signed in with the password alone; a stolen session added a passkey without the
// password, and it outlived the password change; 10,000 anonymous passkey options pushed a person's
// challenge out of the server's store.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-passkey-step-'));
const SETUP_TOKEN = 'passkey-step-setup-token';
const PASSWORD = 'headless-password';

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const cookieNamed = (res: RawResponse, name: string) => res.headers['set-cookie']?.find((c) => c.startsWith(`${name}=`))?.split(';')[0];
const withCookies = (headers: Record<string, string>, ...cookies: Array<string | undefined>) => ({ ...headers, cookie: cookies.filter(Boolean).join('; ') });

describe('a passkey as the second step of a password sign-in (built server, FLEET_REQUIRE_2FA=all)', () => {
  it('the password alone opens no session; the passkey finishes it, bound to that sign-in; adding a passkey needs the password; a password change lists it', { timeout: 40_000 }, async () => {
    // The server's clock, one second into a throttle window (nextWindowClock): its failures all count in that window.
    const server = await startHeadless({ DB_PATH: path.join(dir, 'homefleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_REQUIRE_2FA: 'all' }, { clockShiftMs: nextWindowClock(WINDOW_MS).shiftMs });
    const port = new URL(server.url).port;
    const origin = `http://localhost:${port}`;
    // Passkeys need a host name: every request says it is for localhost.
    const at = { host: `localhost:${port}`, origin };
    const firstSession = await setUpAdmin(server.url, SETUP_TOKEN);
    const admin = { ...at, cookie: firstSession };
    expect((await rawRequest(server.url, 'GET', '/api/instances', admin)).body).toEqual({ error: 'second factor required' });

    // A session alone adds no passkey: the password (or a current code) first, wrong ones counted per account.
    expect((await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', admin, {})).status).toBe(400);
    expect((await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', admin)).status).toBe(400);
    expect((await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', admin, { password: PASSWORD, code: '123456' })).status).toBe(400);
    expect((await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', admin, { code: '123456' })).body).toEqual({ error: 'invalid code' });
    expect((await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', admin, { password: 'wrong-password' })).body).toEqual({ error: 'wrong password' });
    const key = softPasskey();
    const registration = await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', admin, { password: PASSWORD });
    expect(registration.status).toBe(200);
    const added = await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/verify', admin, { name: 'Laptop', response: key.register(registration.body, origin) });
    expect([added.status, added.body.name, added.body.added_since_password_change]).toEqual([201, 'Laptop', true]);

    // The password alone: 200, the steps that may follow, a pending cookie and no session.
    const login = await rawRequest(server.url, 'POST', '/api/auth/login', at, { username: 'root', password: PASSWORD });
    expect([login.status, login.body]).toEqual([200, { second_factor: 'passkey', second_factors: ['passkey'] }]);
    expect(login.headers['set-cookie']).toHaveLength(1);
    const pending = cookieNamed(login, 'homefleet_pending_dev')!;
    expect(pending).toBeDefined();
    expect((await rawRequest(server.url, 'GET', '/api/instances', withCookies(at, pending))).status).toBe(401);
    expect((await rawRequest(server.url, 'GET', '/api/auth/session', withCookies(at, pending))).status).toBe(401);

    // Its passkey step names the account's passkeys; the challenge rides in a signed cookie bound to this sign-in.
    expect((await rawRequest(server.url, 'POST', '/api/auth/login/passkey/options', at)).status).toBe(401);
    const step = await rawRequest(server.url, 'POST', '/api/auth/login/passkey/options', withCookies(at, pending));
    expect([step.status, step.body.allowCredentials?.map((c: { id: string }) => c.id)]).toEqual([200, [key.id]]);
    const stepCookie = cookieNamed(step, 'homefleet_passkey_step_dev')!;
    expect(step.headers['set-cookie']!.find((c) => c.startsWith('homefleet_passkey_step_dev='))).toMatch(/; Path=\/; Max-Age=300; HttpOnly; SameSite=Lax$/);

    // A challenge of the password-less sign-in, or of another pending sign-in, does not finish this one.
    const loose = await rawRequest(server.url, 'POST', '/api/auth/passkeys/options', at);
    const looseCookie = cookieNamed(loose, 'homefleet_passkey_dev')!.replace('homefleet_passkey_dev', 'homefleet_passkey_step_dev');
    expect((await rawRequest(server.url, 'POST', '/api/auth/login/passkey', withCookies(at, pending, looseCookie), { response: key.assert(loose.body, origin) })).status).toBe(401);
    const other = await rawRequest(server.url, 'POST', '/api/auth/login', at, { username: 'root', password: PASSWORD });
    const otherPending = cookieNamed(other, 'homefleet_pending_dev')!;
    expect((await rawRequest(server.url, 'POST', '/api/auth/login/passkey', withCookies(at, otherPending, stepCookie), { response: key.assert(step.body, origin) })).status).toBe(401);
    // Without the browser's Origin: refused before anything is checked.
    expect((await rawRequest(server.url, 'POST', '/api/auth/login/passkey', { host: at.host, cookie: `${pending}; ${stepCookie}` }, { response: key.assert(step.body, origin) })).status).toBe(403);
    for (const body of [{}, { response: 'x' }, { response: { id: 1 } }, [], 'null']) {
      expect((await rawRequest(server.url, 'POST', '/api/auth/login/passkey', withCookies(at, pending, stepCookie), body)).status).toBe(400);
    }

    const assertion = key.assert(step.body, origin);
    const done = await rawRequest(server.url, 'POST', '/api/auth/login/passkey', withCookies(at, pending, stepCookie), { response: assertion });
    expect([done.status, done.body.user?.username]).toEqual([200, 'root']);
    const session = withCookies(at, cookieNamed(done, 'homefleet_session_dev'));
    expect((await rawRequest(server.url, 'GET', '/api/instances', session)).status).toBe(200);
    // Once: the same answer with the same cookies is refused.
    expect((await rawRequest(server.url, 'POST', '/api/auth/login/passkey', withCookies(at, pending, stepCookie), { response: assertion })).status).toBe(401);

    // PRODUCT.md: the change answers 204. The passkey added while the old password stood stays marked
    // after it (it outlives the sessions the change ended), so the password page can list it.
    const changed = await rawRequest(server.url, 'POST', '/api/auth/password', session, { current_password: PASSWORD, new_password: 'a-new-root-password' });
    expect(changed.status).toBe(204);
    const after = withCookies(at, cookieNamed(changed, 'homefleet_session_dev'));
    expect((await rawRequest(server.url, 'GET', '/api/auth/passkeys', after)).body).toEqual([{ id: added.body.id, name: 'Laptop', created_at: added.body.created_at, last_used_at: expect.any(String), added_since_password_change: true }]);
    // Wrong answers count in the account's password-verification window (5): two above, three more, then even the right password waits.
    for (let i = 0; i < 3; i++) expect((await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', after, { password: `wrong-${i}` })).status).toBe(401);
    const throttled = await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', after, { password: 'a-new-root-password' });
    expect([throttled.status, Number(throttled.headers['retry-after']) > 0]).toEqual([429, true]);

    const stopped = await server.stop();
    const output = `${stopped.stdout}${stopped.stderr}`;
    for (const secret of [PASSWORD, 'a-new-root-password', step.body.challenge, stepCookie.split('=')[1]!, pending.split('=')[1]!]) expect(output).not.toContain(secret);
    const db = new Database(path.join(dir, 'homefleet.db'), { readonly: true });
    try {
      const audit = JSON.stringify(db.prepare('SELECT * FROM audit_log').all());
      for (const secret of [PASSWORD, step.body.challenge, stepCookie.split('=')[1]!]) expect(audit).not.toContain(secret);
      expect(audit).toContain('root signed in with a password and a passkey from 127.0.0.1');
    } finally {
      db.close();
    }
  });

  it('10,050 anonymous passkey options do not push out a challenge handed out before them', async () => {
    const server = await startHeadless({ DB_PATH: path.join(dir, 'flood.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' });
    const port = new URL(server.url).port;
    const origin = `http://localhost:${port}`;
    const at = { host: `localhost:${port}`, origin };
    const admin = { ...at, cookie: await setUpAdmin(server.url, SETUP_TOKEN) };
    const key = softPasskey();
    const registration = await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/options', admin, { password: PASSWORD });
    expect((await rawRequest(server.url, 'POST', '/api/auth/passkeys/register/verify', admin, { name: 'Laptop', response: key.register(registration.body, origin) })).status).toBe(201);

    const victim = await rawRequest(server.url, 'POST', '/api/auth/passkeys/options', at);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      let sent = 0;
      const statuses = new Set<number>();
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (sent < 10_050) {
          sent++;
          statuses.add((await sendBytes(`${server.url}/api/auth/passkeys/options`, 'POST', at, undefined, agent)).status);
        }
      }));
      expect([...statuses]).toEqual([200]);
    } finally {
      agent.destroy();
    }
    const signedIn = await rawRequest(server.url, 'POST', '/api/auth/passkeys/verify', withCookies(at, cookieNamed(victim, 'homefleet_passkey_dev')), { response: key.assert(victim.body, origin) });
    expect([signedIn.status, signedIn.body.user?.username]).toEqual([200, 'root']);
    await server.stop();
  }, 120_000);
});
