import { execa } from 'execa';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { killWhenTestEnds } from './helpers/listening.js';

// `HOST=0.0.0.0 npm start` on a clean data folder: the built server is spawned as npm start runs it.
// It binds every interface, but this test connects only to 127.0.0.1.
const root = path.resolve(import.meta.dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-headless-tls-'));
const SETUP_TOKEN = 'headless-tls-setup-token';

beforeAll(async () => {
  // The run's one build (test/setup/global.ts): building here rewrote dist/ while other files ran it.
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Starts dist/server/main.js and collects its log lines until the listening line (and the certificate line, if any). */
async function startHeadless(env: Record<string, string>, lines = 1, nodeArgs: string[] = []) {
  const child = execa(process.execPath, [...nodeArgs, 'dist/server/main.js'], { cwd: root, env: { PORT: '0', LOG_LEVEL: 'info', ...env }, extendEnv: false, reject: false });
  killWhenTestEnds(child);
  const log = await new Promise<Array<Record<string, any>>>((resolve, reject) => {
    let out = '';
    // A server that never gets there is stopped, not left running past the test.
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no listening line within 10 s: ${out}`))), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const parsed = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
      const at = parsed.findIndex((l) => /listening on/.test(l.msg));
      if (at >= 0 && parsed.length >= at + lines) (clearTimeout(timer), resolve(parsed));
    });
    void child.then((r) => (clearTimeout(timer), reject(new Error(`server exited: ${r.stderr}`))));
  });
  return { child, log };
}

function get(url: string, ca: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  return new Promise<{ status: number; headers: Record<string, any>; body: any }>((resolve, reject) => {
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
    const req = https.request(url, { method: init.method ?? 'GET', ca, headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...init.headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('HOST=0.0.0.0 npm start', () => {
  it('serves HTTPS with a self-signed certificate it makes once, printing the https:// addresses and the fingerprint', async () => {
    const dbPath = path.join(dir, 'data', 'homefleet.db');
    const env = { HOST: '0.0.0.0', DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN };
    const first = await startHeadless(env, 2);
    const listening = first.log.find((l) => /listening on/.test(l.msg))!;
    expect(listening.msg).toMatch(/^homefleet listening on https:\/\//);
    const local = (listening.open as string[]).find((u) => u.startsWith('https://127.0.0.1:'))!;
    expect(local).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(listening.open).toContain(`https://${os.hostname().toLowerCase()}:${new URL(local).port}`);

    const certLine = first.log.find((l) => /fingerprint/.test(l.msg))!;
    const certFile = path.join(dir, 'data', 'homefleet-tls.crt');
    expect(certLine).toMatchObject({ certificate: certFile, self_signed: true });
    const cert = fs.readFileSync(certFile, 'utf8');
    const openssl = await execa('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], { input: cert });
    expect(certLine.fingerprint).toBe(openssl.stdout.replace(/^sha256 Fingerprint=/i, ''));
    expect(certLine.msg).toContain(certLine.fingerprint);
    expect(certLine.msg).toContain(certLine.spki_pin);
    expect(fs.statSync(certFile).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dir, 'data', 'homefleet-tls.key')).mode & 0o777).toBe(0o600);

    // The first administrator over HTTPS, from the address printed, trusting exactly that certificate.
    const origin = { origin: local };
    const setup = await get(`${local}/setup`, cert, { method: 'POST', headers: origin, body: { setup_token: SETUP_TOKEN, username: 'root', display_name: 'Root', password: 'headless-password' } });
    expect(setup.status).toBe(201);
    const login = await get(`${local}/api/auth/login`, cert, { method: 'POST', headers: origin, body: { username: 'root', password: 'headless-password' } });
    expect(login.status).toBe(200);
    expect(login.headers['set-cookie'][0]).toMatch(/^__Host-homefleet_session=.*; HttpOnly; Secure; SameSite=Lax$/);
    expect(login.headers['strict-transport-security']).toBeUndefined();
    expect((await first.child.kill('SIGTERM'), await first.child).exitCode).toBe(0);

    // Later starts reuse it.
    const second = await startHeadless(env, 2);
    expect(second.log.find((l) => /fingerprint/.test(l.msg))!.fingerprint).toBe(certLine.fingerprint);
    second.child.kill('SIGTERM');
    expect((await second.child).exitCode).toBe(0);
  });

  it('serves HTTPS on a Node without process.getBuiltinModule, as Node 22.0 to 22.2 are', async () => {
    const dbPath = path.join(dir, 'node22', 'homefleet.db');
    const withoutIt = ['--import', 'data:text/javascript,delete process.getBuiltinModule'];
    const { child, log } = await startHeadless({ HOST: '127.0.0.1', FLEET_TLS: 'on', DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN }, 2, withoutIt);
    const local = (log.find((l) => /listening on/.test(l.msg))!.open as string[]).find((u) => u.startsWith('https://127.0.0.1:'))!;
    const cert = fs.readFileSync(path.join(dir, 'node22', 'homefleet-tls.crt'), 'utf8');
    expect((await get(`${local}/api/health`, cert)).status).toBe(200);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
  });

  it('with FLEET_TLS=off keeps plain HTTP, and sign-in over it only on a loopback name', async () => {
    // fleet.lan is one of its names (FLEET_ALLOWED_HOSTS), so the request gets past the Host check to the login rule.
    const { child, log } = await startHeadless({ HOST: '0.0.0.0', FLEET_TLS: 'off', DB_PATH: ':memory:', FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_ALLOWED_HOSTS: 'fleet.lan' });
    const listening = log.find((l) => /listening on/.test(l.msg))!;
    expect(listening.msg).toMatch(/^homefleet listening on http:\/\/0\.0\.0\.0:\d+$/);
    const port = new URL(listening.open[0]).port;
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/api/health`)).status).toBe(200);
    const login = (host: string) =>
      execa('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Host: ${host}`, '-H', `Origin: http://127.0.0.1:${port}`, '-H', 'Content-Type: application/json', '-d', '{"username":"x","password":"y"}', `${base}/api/auth/login`]);
    expect((await login(`127.0.0.1:${port}`)).stdout).toBe('401'); // reached the password check
    expect((await login(`fleet.lan:${port}`)).stdout).toBe('403'); // https required
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
  });
});
