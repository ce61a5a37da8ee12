import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/until.js';

// `npm run bench:events`: the built server in its own process on 127.0.0.1; 200 open event streams
// (40 accounts x 5, the per-session cap) while instances change 50 times a second. Prints delivery
// latency (change sent -> event parsed by every stream) and the server's RSS against the same load
// with no streams open.

const root = path.resolve(import.meta.dirname, '../..');
const STREAMS = 200;
const PER_SESSION = 5;
const RATE = 50;
const SECONDS = 5;
const lines: string[] = [];
afterAll(() => console.log(`\n${lines.join('\n')}\n`));

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

class Client {
  cookie = '';
  constructor(readonly url: string) {}
  async request(method: string, pathname: string, body?: unknown) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (method !== 'GET') headers.origin = this.url;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookie) headers.cookie = this.cookie;
    const res = await fetch(this.url + pathname, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const set = res.headers.getSetCookie();
    if (set.length) this.cookie = set.map((line) => line.split(';')[0]).join('; ');
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
}

async function startServer() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-events-bench-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const setupToken = `setup-${process.pid}`;
  const child: ChildProcess = spawn(process.execPath, ['dist/server/main.js'], {
    cwd: root,
    env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', DB_PATH: path.join(dir, 'bench.db'), LOG_LEVEL: 'warn', FLEET_SETUP_TOKEN: setupToken, FLEET_AUTH_ALLOW_HTTP: 'true' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > 100) throw new Error('server did not start');
    await sleep(100);
  }
  const admin = new Client(url);
  expect((await admin.request('POST', '/setup', { setup_token: setupToken, username: 'admin', display_name: 'A', password: 'bench-password-1' })).status).toBe(201);
  expect((await admin.request('POST', '/api/auth/login', { username: 'admin', password: 'bench-password-1' })).status).toBe(200);
  return {
    url,
    admin,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A signed-in viewer: created by the administrator, temporary password changed, so its session may stream. */
async function viewer(server: Awaited<ReturnType<typeof startServer>>, n: number): Promise<Client> {
  const created = await server.admin.request('POST', '/api/users', { username: `viewer${n}`, display_name: `V${n}`, role: 'viewer' });
  const client = new Client(server.url);
  await client.request('POST', '/api/auth/login', { username: `viewer${n}`, password: created.body.temporary_password });
  const changed = await client.request('POST', '/api/auth/password', { current_password: created.body.temporary_password, new_password: `viewer-password-${n}` });
  expect(changed.status).toBe(204);
  return client;
}

/** One stream: records, for each instance.updated, now - the send time carried in the instance name. */
function openStream(url: string, cookie: string, latencies: number[]): Promise<http.ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/api/events`, { headers: { cookie, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream status ${res.statusCode}`));
      let pending = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        pending += chunk;
        let cut;
        while ((cut = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, cut);
          pending = pending.slice(cut + 2);
          if (!block.includes('event: instance.updated')) continue;
          const sent = /"name":"t-(\d+(?:\.\d+)?)"/.exec(block);
          if (sent) latencies.push(now() - Number(sent[1]));
        }
      });
      resolve(req);
    });
    req.on('error', reject);
  });
}

/** RATE changes a second for SECONDS, each a PUT that renames one of the instances with its send time. */
async function changes(admin: Client): Promise<number> {
  let sent = 0;
  const total = RATE * SECONDS;
  const started = now();
  const inFlight: Promise<unknown>[] = [];
  while (sent < total) {
    const due = started + (sent * 1000) / RATE;
    if (due > now()) await sleep(due - now());
    const vmid = 100 + (sent % 20);
    inFlight.push(admin.request('PUT', `/api/instances/${vmid}`, { name: `t-${now().toFixed(3)}` }).then((r) => expect(r.status).toBe(200)));
    sent++;
  }
  await Promise.all(inFlight);
  return sent;
}

describe('live events benchmark', () => {
  it(`${STREAMS} open streams, ${RATE} changes a second: delivery latency and server memory`, async () => {
    const server = await startServer();
    try {
      for (let i = 0; i < 20; i++) expect((await server.admin.request('POST', '/api/instances', { vmid: 100 + i, name: `vm-${i}`, state: 'deployed', stack: 'development' })).status).toBe(201);
      const viewers: Client[] = [];
      for (let i = 0; i < STREAMS / PER_SESSION; i++) viewers.push(await viewer(server, i));
      await sleep(500);
      const idleRss = rssMiB(server.pid);

      // The same load with no stream open.
      await changes(server.admin);
      await sleep(300);
      const noStreamsRss = rssMiB(server.pid);

      const latencies: number[] = [];
      const requests: http.ClientRequest[] = [];
      for (const client of viewers) for (let k = 0; k < PER_SESSION; k++) requests.push(await openStream(server.url, client.cookie, latencies));
      await sleep(300);
      const sent = await changes(server.admin);
      await sleep(500);
      const streamsRss = rssMiB(server.pid);
      for (const req of requests) req.destroy();

      const sorted = [...latencies].sort((a, b) => a - b);
      const expected = sent * STREAMS;
      lines.push(
        `live events bench: ${STREAMS} streams, ${RATE} changes/s for ${SECONDS} s (${sent} changes, ${expected.toLocaleString('en')} deliveries expected)`,
        `delivered                       ${latencies.length.toLocaleString('en')} (${((latencies.length / expected) * 100).toFixed(1)}%)`,
        `delivery latency                p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`,
        `server RSS idle                 ${idleRss.toFixed(1)} MiB`,
        `server RSS, load, no streams    ${noStreamsRss.toFixed(1)} MiB`,
        `server RSS, load, ${STREAMS} streams   ${streamsRss.toFixed(1)} MiB   (+${(streamsRss - noStreamsRss).toFixed(1)} MiB)`,
      );
      expect(latencies.length).toBe(expected);
    } finally {
      await server.stop();
    }
  });
});
