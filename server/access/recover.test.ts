import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../../test/helpers/build.js';
import { startBuiltServer } from '../../test/helpers/built-server.js';
import { logIn, startServer } from '../../test/helpers/server.js';
import { TOTP } from 'otpauth';
import { createApp } from '../app.js';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-recover-'));
const dbPath = path.join(dir, 'homefleet.db');

beforeAll(async () => {
  await ensureBuilt();
  const app = createApp({ dbPath });
  await app.accounts.create({ username: 'boss', display_name: 'Boss', role: 'administrator', password: 'forgotten-password' });
  await app.accounts.create({ username: 'spare', display_name: 'Spare', role: 'administrator', password: 'spare-password' });
  await app.accounts.create({ username: 'live', display_name: 'Live', role: 'administrator', password: 'live-password-1' });
  await app.accounts.create({ username: 'ops', display_name: 'Ops', role: 'operator', password: 'operator-password' });
  const off = await app.accounts.create({ username: 'old', display_name: 'Old', role: 'administrator', password: 'old-password' });
  app.accounts.update(off.id, { enabled: false });
  await app.accounts.create({ username: 'temp', display_name: 'Temp', role: 'administrator', password: 'temporary-pass', must_change_password: true });
  await app.close();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const recover = (args: string[], input: string, env: Record<string, string> = { DB_PATH: dbPath }) =>
  execa(process.execPath, ['dist/server/recover.js', ...args], { cwd: root, env, extendEnv: false, input, reject: false, timeout: 15_000 });

describe('npm run recover -- <username>', () => {
  it('resets an enabled administrator from two lines on standard input, clears must-change, ends sessions, audits it', async () => {
    const server = await startServer({ dbPath, signedIn: false });
    const before = await logIn(server.anonymous(), 'temp', 'temporary-pass');
    await server.stop();

    const result = await execa('npm', ['run', '--silent', 'recover', '--', 'temp'], {
      cwd: root,
      env: { DB_PATH: dbPath },
      input: 'recovered-password\nrecovered-password\n',
      reject: false,
      timeout: 30_000,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('new password set for temp');
    expect(result.stdout + result.stderr).not.toContain('recovered-password');

    const after = await startServer({ dbPath, signedIn: false });
    const stale = after.anonymous();
    stale.setCookie('homefleet_session_dev', before.cookieHeader().split('=')[1]!);
    expect((await stale.get('/api/auth/session')).status).toBe(401);
    await expect(logIn(after.anonymous(), 'temp', 'temporary-pass')).rejects.toThrow('401');
    const client = await logIn(after.anonymous(), 'temp', 'recovered-password');
    expect((await client.get('/api/auth/session')).body.user.must_change_password).toBe(false);
    const audit = (await client.get('/api/audit')).body as Array<{ action: string; actor: string | null; target: string }>;
    expect(audit.find((e) => e.action === 'recovery')).toMatchObject({ actor: null, target: 'temp' });
    await after.stop();
  });

  it('ends the sessions of a running server at once: its next request is refused', async () => {
    const server = await startBuiltServer({ DB_PATH: dbPath, FLEET_AUTH_ALLOW_HTTP: 'true' });
    try {
      const headers = { 'content-type': 'application/json', origin: server.url };
      const login = await fetch(`${server.url}/api/auth/login`, { method: 'POST', headers, body: JSON.stringify({ username: 'live', password: 'live-password-1' }) });
      expect(login.status).toBe(200);
      const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const session = () => fetch(`${server.url}/api/auth/session`, { headers: { ...headers, cookie } }).then((res) => res.status);
      // Twice: the server has read this session before the command runs.
      expect([await session(), await session()]).toEqual([200, 200]);
      const result = await recover(['live'], 'live-recovered-1\nlive-recovered-1\n');
      expect(result.exitCode, result.stderr).toBe(0);
      expect(await session()).toBe(401);
    } finally {
      await server.stop();
    }
  });

  it.each([
    [['ops'], 'ops is not an administrator'],
    [['old'], 'old is disabled'],
    [['nobody'], 'no account named "nobody"'],
  ])('refuses %j with one line and a non-zero exit', async (args, reason) => {
    const result = await recover(args, 'another-password\nanother-password\n');
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(reason);
  });

  it.each([
    ['two different passwords', 'first-password\nsecond-password\n', 'the two passwords differ'],
    ['a short password', 'short\nshort\n', 'must be 8 to 128 characters'],
    ['one line only', 'only-one-line\n', 'expected the new password twice'],
  ])('refuses %s and changes nothing', async (_what, input, reason) => {
    const result = await recover(['boss'], input);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(reason);
    const server = await startServer({ dbPath, signedIn: false });
    await logIn(server.anonymous(), 'boss', 'forgotten-password');
    await server.stop();
  });

  it('removes the second factor of an administrator who lost it: the new password alone signs in', async () => {
    const server = await startServer({ dbPath, signedIn: false });
    const spare = await logIn(server.anonymous(), 'spare', 'spare-password');
    const { secret } = (await spare.post('/api/auth/totp/setup')).body;
    expect((await spare.post('/api/auth/totp/confirm', { code: new TOTP({ secret }).generate() })).status).toBe(200);
    expect((await server.anonymous().post('/api/auth/login', { username: 'spare', password: 'spare-password' })).body).toEqual({ second_factor: 'totp', second_factors: ['totp'] });
    await server.stop();

    const result = await recover(['spare'], 'spare-recovered-1\nspare-recovered-1\n');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toBe('recover: new password set for spare; their sessions are ended; their second factors (TOTP) are removed');
    const after = await startServer({ dbPath, signedIn: false });
    const client = await logIn(after.anonymous(), 'spare', 'spare-recovered-1');
    expect((await client.get('/api/auth/totp')).body).toEqual({ enabled: false, recovery_codes_left: 0 });
    const entry = ((await client.get('/api/audit')).body as Array<{ action: string; summary: string }>).find((e) => e.action === 'recovery');
    expect(entry?.summary).toBe('the password of spare was reset with the recovery command; their second factors (TOTP) were removed');
    await after.stop();
  });

  it('takes no password argument and no second argument', async () => {
    for (const args of [[], ['boss', 'new-password-here'], ['--password=x']]) {
      const result = await recover(args, 'new-password-here\nnew-password-here\n');
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('usage: npm run recover -- <username>');
    }
  });

  it('refuses a DB_PATH with no database instead of creating one', async () => {
    const missing = path.join(dir, 'missing.db');
    const result = await recover(['boss'], 'a-password-1\na-password-1\n', { DB_PATH: missing });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('no database at');
    expect(fs.existsSync(missing)).toBe(false);
  });
});
