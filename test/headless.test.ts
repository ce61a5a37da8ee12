import { execa, type ResultPromise } from 'execa';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { TestClient } from './helpers/http.js';
import { listeningUrl } from './helpers/listening.js';
import { json, startMockRemote } from './helpers/remote.js';
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
  const url = await listeningUrl(child);
  return { child, url };
}

async function stop(child: ResultPromise) {
  child.kill('SIGTERM');
  return child;
}

/** First-administrator setup through the setup page's form, as a browser sends it, then login; returns the session cookie. */
async function setUpAndSignIn(url: string): Promise<string> {
  const setup = await fetch(`${url}/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
    body: new URLSearchParams({ setup_token: SETUP_TOKEN, username: 'root', display_name: 'Root', password: 'headless-password' }),
    redirect: 'manual',
  });
  expect({ status: setup.status, location: setup.headers.get('location') }).toEqual({ status: 303, location: '/login?setup=done' });
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
    // A form in ISO-8859-1 (a charset only forms may use) is decoded: the refused form echoes the name.
    const latin1 = await fetch(`${first.url}/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1', origin: first.url },
      body: new Uint8Array(Buffer.from(`setup_token=${SETUP_TOKEN}&username=root&display_name=Zo%EB&password=short`, 'latin1')),
    });
    expect(latin1.status).toBe(400);
    expect(await latin1.text()).toContain('value="Zo\u00eb"');
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
    // JSON is read as UTF-8 only (test/body-charsets.test.ts tries every other charset on every route).
    const login = (type: string, body: Buffer) =>
      fetch(`${first.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': type, origin: first.url }, body: new Uint8Array(body) });
    const wrong = JSON.stringify({ username: 'admin', password: 'not-the-p\u00e4ssword' });
    expect((await login('application/json; charset=UTF-8', Buffer.from(wrong))).status).toBe(401);
    expect((await login('application/json; charset=shift_jis', Buffer.from(wrong))).status).toBe(415);
    expect((await login('application/json; charset=iso-8859-1', Buffer.from(wrong, 'latin1'))).status).toBe(415);
    expect((await login('application/json; charset=utf-16le', Buffer.from(wrong, 'utf16le'))).status).toBe(415);
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

  it('SIGTERM ends open event streams and agents\' waiting polls first, stops the background tasks and stops at once, not after the 10-second grace', async () => {
    const dbPath = path.join(dir, 'streams', 'homefleet.db');
    const server = await startHeadless({ DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true' });
    const cookie = await setUpAndSignIn(server.url);
    const client = new TestClient(server.url, { cookie });
    const stream = await fetch(`${server.url}/api/events`, { headers: { cookie } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(': connected\n\n');
    // An agent's command poll waiting 30 s: its deadline is watched by the hosts.command-polls task.
    const token = (await client.post('/api/hosts/enrollment-tokens', {})).body.token as string;
    const enrolled = await fetch(`${server.url}/api/agent/enroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ hostname: 'pve1', machine_id: 'headless-machine', agent_version: '1.0.0' }),
    });
    expect(enrolled.status).toBe(201);
    const hostToken = ((await enrolled.json()) as { host_token: string }).host_token;
    const poll = fetch(`${server.url}/api/agent/commands?wait=30`, { headers: { authorization: `Bearer ${hostToken}` } });
    const tasks = async () => ((await client.get('/api/health/tasks')).body.tasks as { name: string }[]).map((t) => t.name);
    await expect.poll(tasks).toContain('hosts.command-polls');
    expect(await tasks()).toEqual(expect.arrayContaining(['events.keep-alive', 'events.recheck', 'hosts.sweep', 'alerts.evaluate']));

    const started = Date.now();
    const exited = await stop(server.child);
    expect(exited.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await poll).status).toBe(204);
    // The stream ends (after the events of the enrollment, written before the SIGTERM).
    while (!(await reader.read()).done);
    const lines = String(exited.stdout)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    const after = lines.slice(lines.findIndex((l) => l.msg === 'shutting down'));
    // One path, in order, and nothing failing on the way: no task run against a closed database.
    expect(after.map((l) => l.msg).filter((m) => m !== 'request')).toEqual(['shutting down', 'stopped']);
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('keeps no connection alive while it stops: a request in flight is answered and its connection closed at once, so a browser cannot send its next request there', async () => {
    // A browser reused such a connection: its live stream, reconnecting, was answered 503 (the events
    // hub closes first), again and again until the 10-second grace ran out, and the stop waited as long.
    const server = await startHeadless({ DB_PATH: path.join(dir, 'keep-alive', 'homefleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' });
    const cookie = await setUpAndSignIn(server.url);
    const url = new URL(server.url);
    const socket = net.connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = once(socket, 'close');
    const body = JSON.stringify({ vmid: 100, name: 'in-flight', state: 'deployed', stack: 'production' });
    // The create's headers and the first bytes of its body arrive before the SIGTERM, the rest after it.
    socket.write(`POST /api/instances HTTP/1.1\r\nHost: ${url.host}\r\nOrigin: ${url.origin}\r\nCookie: ${cookie}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopping = new Promise<void>((resolve) => server.child.stdout!.on('data', (chunk: Buffer) => String(chunk).includes('shutting down') && resolve()));
    const started = Date.now();
    server.child.kill('SIGTERM');
    await stopping;
    // The rest of the body, and behind it (pipelined) a request that comes while the server stops.
    socket.write(`${body.slice(5)}GET /api/health HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
    await closed;
    const closedAfter = Date.now() - started;
    const answers = received.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((a) => a.slice(0, 12))).toEqual(['HTTP/1.1 201', 'HTTP/1.1 200']);
    expect(answers[1]).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedAfter).toBeLessThan(1_000);
    expect((await server.child).exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('stops on SIGTERM when whatever read its output has gone (a log collector stopped with it)', async () => {
    // Its last line was still being written when it exited, and pino's flush at exit then retried
    // the broken pipe every 100 ms for ever: the process never ended. Three servers, as the old one
    // hung in about three stops of five.
    for (let i = 0; i < 3; i++) {
      const server = await startHeadless({ DB_PATH: path.join(dir, 'broken-pipe', `${i}.db`) });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      server.child.kill('SIGTERM');
      server.child.stdout!.destroy();
      const exited = await Promise.race([server.child, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 5_000))]);
      expect(exited === 'running' ? 'still running 5 s after SIGTERM' : exited.exitCode).toBe(0);
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });

  it('reads a Semaphore YAML inventory with the YAML parser it loads on first use', async () => {
    const inventory = 'all:\n  hosts:\n    web:\n  children:\n    caches:\n      hosts:\n        cache[1:2].lan:\n';
    const semaphore = await startMockRemote(json(200, { id: 3, name: 'fleet', type: 'static-yaml', inventory }));
    const server = await startHeadless({ DB_PATH: path.join(dir, 'yaml', 'homefleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' });
    try {
      const client = new TestClient(server.url, { cookie: await setUpAndSignIn(server.url) });
      for (const [vmid, name] of [[1, 'web'], [2, 'cache2'], [3, 'mail']] as const) {
        expect((await client.post('/api/instances', { vmid, name, state: 'deployed', stack: 'production' })).status).toBe(201);
      }
      const jobs: { id: number; key: string }[] = (await client.get('/api/jobs')).body;
      const job = jobs.find((j) => j.key === 'semaphore_sync')!;
      const apiUrl = `${semaphore.url}/api/project/1/inventory/3`;
      expect((await client.put(`/api/jobs/${job.id}`, { config: { api_url: apiUrl, api_token: 'semaphore-token' } })).status).toBe(200);

      const run = await client.post(`/api/jobs/${job.id}/run`);
      expect([run.status, run.body]).toEqual([200, { summary: expect.stringMatching(/^Updated 2 of 3 instances/) }]);
      const instances: { name: string; semaphore: number }[] = (await client.get('/api/instances?sort=vmid')).body;
      expect(instances.map((i) => [i.name, i.semaphore])).toEqual([['web', 1], ['cache2', 1], ['mail', 0]]);
    } finally {
      await stop(server.child);
      await semaphore.close();
    }
  });

  it('stops with one line naming a bad variable', async () => {
    const result = await execa(process.execPath, ['dist/server/main.js'], { cwd: root, env: { PORT: 'eighty', DB_PATH: ':memory:' }, reject: false });
    expect(result.exitCode).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual(['homefleet: Invalid PORT (got "eighty"): must be a port number from 0 to 65535']);
  });

  it('refuses to start, with one line, on a public URL that is not https://', async () => {
    const result = await execa(process.execPath, ['dist/server/main.js'], { cwd: root, env: { FLEET_PUBLIC_URL: 'http://192.0.2.2:3901', DB_PATH: ':memory:' }, extendEnv: false, reject: false });
    expect(result.exitCode).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^homefleet: Invalid FLEET_PUBLIC_URL \(got "http:\/\/192\.0\.2\.2:3901"\): must be an https:\/\/ origin/);
  });

  it('is bundled as pure ASCII (V8 keeps the source one-byte) with only the English zod messages', () => {
    const bundle = fs.readFileSync(path.join(root, 'dist/server/server.cjs'), 'utf8');
    expect(bundle.length).toBeGreaterThan(100_000);
    expect(/[^\x00-\x7f]/.test(bundle)).toBe(false);
    expect(bundle).toContain('Invalid input'); // zod's English messages
    expect(bundle).not.toContain('Eingabe'); // its German ones
  });
});

/** The pids of a process's descendants (Linux /proc), so the test can see that none is left. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) children.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    return [];
  }
  for (const child of [...children]) children = children.concat(descendants(child));
  return children;
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  it.skipIf(process.platform !== 'linux')('stops the server when npm gets SIGTERM: the port closes and no process is left', async () => {
    const npm = execa('npm', ['start'], {
      cwd: root,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? dir, PORT: '0', HOST: '127.0.0.1', DB_PATH: path.join(dir, 'npm-start.db'), LOG_LEVEL: 'info' },
      extendEnv: false,
      reject: false,
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      npm.stdout!.on('data', (chunk: Buffer) => {
        out += chunk;
        const match = /listening on (http:\/\/[^"\s]+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      void npm.then((r) => reject(new Error(`npm start exited: ${r.stderr}`)));
    });
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
    const tree = descendants(npm.pid!);
    expect(tree.length).toBeGreaterThan(0);

    npm.kill('SIGTERM');
    await npm;
    const deadline = Date.now() + 10_000;
    while (tree.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(tree.filter(alive)).toEqual([]);
    await expect(fetch(`${url}/api/health`)).rejects.toThrow();
  });
});
