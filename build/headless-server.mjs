// Starts the built headless server (dist/server/main.js) on a free loopback port with a temporary
// database, for the screenshot and bench scripts. When the access layer is present it creates the
// first administrator through POST /setup and signs an API client in.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ADMIN = { username: 'admin', display_name: 'Administrator', password: 'screenshots-and-bench' };

export async function freePort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `{ setUp: false }` leaves setup open (no account yet), for pictures of the setup page; `setupToken` is
 * returned. `env` adds variables (FLEET_AGENT_ALLOW_HTTP, say).
 */
export async function startHeadless({ setUp = true, env = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-script-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const setupToken = `setup-${process.pid}-${Date.now()}`;
  const child = spawn(process.execPath, ['dist/server/main.js'], {
    cwd: root,
    env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', DB_PATH: path.join(dir, 'homefleet.db'), LOG_LEVEL: 'warn', FLEET_SETUP_TOKEN: setupToken, FLEET_AUTH_ALLOW_HTTP: 'true', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {}
    if (i > 100 || child.exitCode !== null) throw new Error('the headless server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }

  let cookie = '';
  async function request(method, pathname, body) {
    const headers = { accept: 'application/json' };
    if (method !== 'GET') headers.origin = url;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (cookie) headers.cookie = cookie;
    const res = await fetch(url + pathname, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body), redirect: 'manual' });
    const set = res.headers.getSetCookie?.() ?? [];
    if (set.length) cookie = set.map((line) => line.split(';')[0]).join('; ');
    const text = await res.text();
    let data = text;
    try {
      data = JSON.parse(text);
    } catch {}
    return { status: res.status, body: data };
  }

  const accessLayer = (await request('GET', '/api/auth/session')).status !== 404;
  if (accessLayer && setUp) {
    const setup = await request('POST', '/setup', { setup_token: setupToken, ...ADMIN });
    if (setup.status !== 201) throw new Error(`setup failed: ${setup.status} ${JSON.stringify(setup.body)}`);
    const login = await request('POST', '/api/auth/login', { username: ADMIN.username, password: ADMIN.password });
    if (login.status !== 200) throw new Error(`login failed: ${login.status}`);
  }

  /** Many instances at once: one import when the server has it, else individual creates. */
  async function seedInstances(instances) {
    const imported = await request('POST', '/api/import', { version: 3, instances });
    if (imported.status === 200) return;
    for (let i = 0; i < instances.length; i += 25) {
      const results = await Promise.all(instances.slice(i, i + 25).map((instance) => request('POST', '/api/instances', instance)));
      const failed = results.find((r) => r.status !== 201);
      if (failed) throw new Error(`seeding failed: ${failed.status} ${JSON.stringify(failed.body)}`);
    }
  }

  /** Signs a Playwright page in through the login page (nothing to do without an access layer). */
  async function signInPage(page) {
    if (!accessLayer) return;
    await page.goto(`${url}/login`);
    await page.getByLabel('Username').fill(ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  }

  async function stop() {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    fs.rmSync(dir, { recursive: true, force: true });
  }

  return { url, dbPath: path.join(dir, 'homefleet.db'), accessLayer, setupToken, request, seedInstances, signInPage, stop };
}

const NAMES = ['web', 'db', 'cache', 'proxy', 'media', 'git', 'ci-runner', 'backup', 'dns', 'vault', 'grafana', 'loki', 'minio', 'nextcloud', 'jellyfin', 'homeassistant'];
const STATES = ['deployed', 'deployed', 'deployed', 'testing', 'degraded'];

/** A believable homelab: `count` instances with varied names, states, stacks and services. */
export function sampleInstances(count) {
  return Array.from({ length: count }, (_, i) => {
    const base = NAMES[i % NAMES.length];
    const n = Math.floor(i / NAMES.length) + 1;
    return {
      vmid: 100 + i,
      name: `${base}-${String(n).padStart(2, '0')}`,
      state: STATES[i % STATES.length],
      stack: i % 3 === 0 ? 'production' : 'development',
      tailscale_ip: i % 2 === 0 ? `100.64.${Math.floor(i / 250)}.${(i % 250) + 1}` : '',
      tailscale: i % 2 === 0 ? 1 : 0,
      atlas: i % 4 === 0 ? 1 : 0,
      argus: i % 5 === 0 ? 1 : 0,
      patchmon: i % 3 === 1 ? 1 : 0,
    };
  });
}
