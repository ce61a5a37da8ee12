import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import pkg from '../package.json' with { type: 'json' };

const root = path.resolve(import.meta.dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-headless-'));

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Starts the built headless server on a free loopback port and waits for its first log line. */
async function startHeadless(env: Record<string, string>) {
  const child = execa(process.execPath, ['dist/server/main.js'], {
    cwd: root,
    env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    extendEnv: false,
    reject: false,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const match = /listening on (http:\/\/[^"\s]+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    void child.then((r) => reject(new Error(`server exited: ${r.stderr}`)));
  });
  return { child, url };
}

async function stop(child: ResultPromise) {
  child.kill('SIGTERM');
  return child;
}

/** First-administrator setup and login through the real routes; returns the session cookie. */
async function setUpAndSignIn(url: string): Promise<string> {
  const json = { 'content-type': 'application/json', origin: url };
  const setup = await fetch(`${url}/setup`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ setup_token: SETUP_TOKEN, username: 'root', display_name: 'Root', password: 'headless-password' }),
  });
  expect(setup.status).toBe(201);
  return signIn(url);
}

async function signIn(url: string): Promise<string> {
  const login = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url },
    body: JSON.stringify({ username: 'root', password: 'headless-password' }),
  });
  expect(login.status).toBe(200);
  return login.headers.getSetCookie()[0]!.split(';')[0]!;
}

const SETUP_TOKEN = 'headless-setup-token';

describe('the headless server', () => {
  it('answers health with the package version, keeps its data across a restart and stops cleanly on SIGTERM', async () => {
    const dbPath = path.join(dir, 'data', 'homefleet.db');
    const env = { DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' };
    const first = await startHeadless(env);
    expect(await (await fetch(`${first.url}/api/health`)).json()).toEqual({ status: 'ok', version: pkg.version });
    expect((await fetch(`${first.url}/api/instances`)).status).toBe(401);
    const cookie = await setUpAndSignIn(first.url);
    const created = await fetch(`${first.url}/api/instances`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: first.url, cookie },
      body: JSON.stringify({ vmid: 42, name: 'persisted', state: 'deployed', stack: 'development' }),
    });
    expect(created.status).toBe(201);
    await fetch(`${first.url}/api/instances/42`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', origin: first.url, cookie },
      body: JSON.stringify({ state: 'testing' }),
    });
    // The bundle leaves out iconv-lite's CJK tables: such a body is refused, a UTF-16 one still read.
    const login = (type: string, body: Buffer) =>
      fetch(`${first.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': type, origin: first.url }, body: new Uint8Array(body) });
    const wrong = JSON.stringify({ username: 'admin', password: 'not-the-password' });
    expect((await login('application/json; charset=shift_jis', Buffer.from(wrong))).status).toBe(415);
    expect((await login('application/json; charset=utf-16le', Buffer.from(wrong, 'utf16le'))).status).toBe(401);
    const exited = await stop(first.child);
    expect(exited.exitCode).toBe(0);
    expect(exited.stdout).toContain('"msg":"stopped"');

    const second = await startHeadless(env);
    const again = await signIn(second.url);
    const instance = await (await fetch(`${second.url}/api/instances/42`, { headers: { cookie: again } })).json();
    expect(instance).toMatchObject({ vmid: 42, name: 'persisted', state: 'testing' });
    const history = await (await fetch(`${second.url}/api/instances/42/history`, { headers: { cookie: again } })).json();
    expect(history.map((h: { field: string }) => h.field)).toEqual(['state', 'created']);
    expect((await stop(second.child)).exitCode).toBe(0);
  });

  it('stops with one line naming a bad variable', async () => {
    const result = await execa(process.execPath, ['dist/server/main.js'], { cwd: root, env: { PORT: 'eighty', DB_PATH: ':memory:' }, reject: false });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['homefleet: Invalid PORT (got "eighty"): must be a port number from 0 to 65535']);
  });

  it('is bundled as pure ASCII (V8 keeps the source one-byte) with only the English zod messages', () => {
    const bundle = fs.readFileSync(path.join(root, 'dist/server/main.js'), 'utf8');
    expect(bundle.length).toBeGreaterThan(100_000);
    expect(/[^\x00-\x7f]/.test(bundle)).toBe(false);
    expect(bundle).toContain('Invalid input'); // zod's English messages
    expect(bundle).not.toContain('Eingabe'); // its German ones
  });
});
