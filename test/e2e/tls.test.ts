import { execa } from 'execa';
import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type HomefleetApp } from '../../server/app.js';
import { defaultConfig } from '../../server/config.js';
import { createListener } from '../../server/tls/listen.js';
import { prepareTls, type TlsSetup } from '../../server/tls/setup.js';
import { removeTempDbs, tempDbPath } from '../helpers/tempdb.js';
import { chromiumLaunchOptions } from '../../build/chromium.mjs';
import { buildRenderer, root } from './helpers.js';

// "A browser on another address of the machine": the server binds 127.0.0.2 only, and its
// certificate covers that address and the name fleet.test, which Chromium resolves to 127.0.0.2.
const ADDRESS = '127.0.0.2';
const PASSWORD = 'tls-admin-password';

let homefleet: HomefleetApp;
let tls: TlsSetup;
let server: ReturnType<typeof createListener>;
let port: number;
let browser: Browser;

beforeAll(async () => {
  await buildRenderer();
  const config = defaultConfig({ host: ADDRESS, tls: 'on', tlsExtraNames: ['fleet.test'], dbPath: tempDbPath(), authAllowHttp: false });
  tls = (await prepareTls(config))!;
  homefleet = createApp({ config, tls: tls.info, rendererDir: path.join(root, 'dist', 'renderer') });
  await homefleet.accounts.create({ username: 'admin', display_name: 'Admin', role: 'administrator', password: PASSWORD });
  server = createListener(homefleet.app, tls);
  server.listen(0, ADDRESS);
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
  const launch = await chromiumLaunchOptions();
  browser = await chromium.launch({ ...launch, args: [...(launch.args ?? []), `--host-resolver-rules=MAP fleet.test ${ADDRESS}, MAP other.test ${ADDRESS}`] });
});

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await homefleet?.close();
  removeTempDbs();
});

/** A request over TLS that trusts only the server's own certificate and checks `name` against it. */
function request(name: string, method: string, pathname: string, headers: Record<string, string> = {}, body?: unknown) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(
      { host: ADDRESS, port, method, path: pathname, servername: name, ca: tls.cert, headers: { host: `${name}:${port}`, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text && res.headers['content-type']?.includes('json') ? JSON.parse(text) : text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('built-in HTTPS with a self-signed certificate', () => {
  it('a browser at a name the certificate covers signs in, with the __Host- Secure cookie and no HSTS', async () => {
    const context = await browser.newContext({ baseURL: `https://fleet.test:${port}`, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const response = await page.goto('/login');
    expect(response!.headers()['strict-transport-security']).toBeUndefined();
    expect(page.url()).toBe(`https://fleet.test:${port}/login`);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/instances');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Instances');

    const cookies = await context.cookies();
    expect(cookies.map(({ name, secure, httpOnly, sameSite, path: p }) => ({ name, secure, httpOnly, sameSite, path: p }))).toEqual([
      { name: '__Host-homefleet_session', secure: true, httpOnly: true, sameSite: 'Lax', path: '/' },
    ]);
    // A write from the page: Chromium sends Origin https://fleet.test:<port>, which the server allows.
    const created = await page.evaluate(async () => {
      const res = await fetch('/api/instances', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ vmid: 300, name: 'over-tls', state: 'deployed', stack: 'development' }) });
      return res.status;
    });
    expect(created).toBe(201);
    await context.close();
  });

  it('a browser at a name the certificate does not cover gets 421 Misdirected Request, not the sign-in page', async () => {
    const context = await browser.newContext({ baseURL: `https://other.test:${port}`, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const res = (await page.goto('/login'))!;
    expect(res.status()).toBe(421);
    expect(await res.text()).toBe('misdirected request: this server does not answer to that host name\n');
    expect(await page.getByLabel('Username').count()).toBe(0);
    expect(await context.cookies()).toEqual([]);
    await context.close();
  });

  it('allows exactly https://<name>:<port> for the names the certificate covers', async () => {
    expect(tls.info.names).toEqual(expect.arrayContaining(['127.0.0.1', ADDRESS, 'fleet.test', 'localhost']));
    const login = (origin?: string) => request('fleet.test', 'POST', '/api/auth/login', origin ? { origin } : {}, { username: 'admin', password: PASSWORD });
    for (const origin of [`https://fleet.test:${port}`, `https://${ADDRESS}:${port}`, `https://localhost:${port}`]) {
      const res = await login(origin);
      expect({ origin, status: res.status }).toEqual({ origin, status: 200 });
      expect(res.headers['set-cookie']![0]).toMatch(/^__Host-homefleet_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; Secure; SameSite=Lax$/);
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
    for (const origin of [`https://other.test:${port}`, `http://fleet.test:${port}`, `https://fleet.test:${port + 1}`, `https://fleet.test`, undefined]) {
      const res = await login(origin);
      expect({ origin, status: res.status, body: res.body }).toEqual({ origin, status: 403, body: { error: 'origin mismatch' } });
    }
  });

  it('a script reaches the API with a token, verifying the certificate by its file or by the logged public-key pin', async () => {
    const login = await request('fleet.test', 'POST', '/api/auth/login', { origin: `https://fleet.test:${port}` }, { username: 'admin', password: PASSWORD });
    const cookie = String(login.headers['set-cookie']![0]).split(';')[0]!;
    const made = await request('fleet.test', 'POST', '/api/tokens', { origin: `https://fleet.test:${port}`, cookie }, { name: 'curl', role: 'viewer' });
    expect(made.status).toBe(201);
    const base = ['-sS', '--fail', '--resolve', `fleet.test:${port}:${ADDRESS}`, '-H', `Authorization: Bearer ${made.body.token}`];
    const byFile = await execa('curl', [...base, '--cacert', tls.certFile!, `https://fleet.test:${port}/api/instances/300`]);
    expect(JSON.parse(byFile.stdout)).toMatchObject({ vmid: 300, name: 'over-tls' });
    const byPin = await execa('curl', [...base, '-k', '--pinnedpubkey', tls.info.spkiPin, `https://fleet.test:${port}/api/instances/300`]);
    expect(JSON.parse(byPin.stdout)).toMatchObject({ vmid: 300 });
    const wrongPin = await execa('curl', [...base, '-k', '--pinnedpubkey', 'sha256//' + 'A'.repeat(43) + '=', `https://fleet.test:${port}/api/health`], { reject: false });
    expect(wrongPin.exitCode).toBe(90);
    expect(homefleet.context.tls).toEqual(tls.info);
  });
});
