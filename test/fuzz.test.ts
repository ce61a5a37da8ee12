import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../server/access/accounts.js';
import { createAuditLog } from '../server/audit.js';
import { createDataContext } from '../server/context.js';
import { openDatabase, openRetained, type Db } from '../server/db/database.js';
import { systemClock } from '../server/time.js';
import { sendBytes as sendTo, startBuiltServer, type Answer, type BuiltServer } from './helpers/built-server.js';
import { buildInstance } from './helpers/factories.js';
import { ed25519Line, skEcdsaLine } from './helpers/ssh-keys.js';
import { ADMIN_PASSWORD } from './helpers/server.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';

/**
 * Client mistakes are 4xx, never 500: explicit cases, then a fuzz run over every write route the
 * server's API document lists (random and mutated bodies, bad encodings, bad paths), signed in as an administrator
 * with the right Origin so requests reach the handlers. The server is the built one
 * (dist/server/main.js) in its own process, as `npm start` and the container run it, so a throw that
 * ends the process fails the run too. Only 127.0.0.1 is ever contacted.
 *
 *   npx vitest run test/fuzz.test.ts                                   # 2,000 requests (npm test)
 *   FUZZ_REQUESTS=20000 FUZZ_SEED=7 npx vitest run test/fuzz.test.ts   # the full run
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
/** Time bound: about 60 requests a second on a busy two-core machine, plus a margin. */
// A bound, not a speed goal: a loaded 2-core machine sends a few dozen fuzzed requests a second
// (each import takes its pre-import snapshot), and the test must still finish by itself.
const BUDGET_MS = Math.max(90_000, REQUESTS * 45);
const CONCURRENCY = 6;
const TELEMETRY_TOKEN = 'fuzz-telemetry-token-of-32-characters!!';
const LOOPBACK_URL = 'http://127.0.0.1:9/fuzz';

/** A write route as the server's API document names it (`POST /api/instances/:vmid`). */
interface Route {
  method: string;
  path: string;
}

const send = (base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> => sendTo(base + path, method, headers, body);

/** mulberry32: the same seed gives the same requests, so a failure can be replayed. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
type Rng = ReturnType<typeof prng>;

const ODD_STRINGS = ['', ' ', '0', '-1', '1e999', 'null', 'true', '\u0000', '\n', '%', '%ff', '😀', 'ä', '<script>', "'; DROP TABLE instances; --", '../../etc/passwd', 'a'.repeat(5000), '**REDACTED**', '__proto__', 'constructor'];
const ODD_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, '', [], {}, [[]], { a: { b: { c: 1 } } }, '9'.repeat(400), ...ODD_STRINGS];

function randomJson(rng: Rng, depth = 0): unknown {
  const kind = rng.int(depth > 3 ? 4 : 7);
  switch (kind) {
    case 0: return rng.pick(ODD_VALUES);
    case 1: return rng.int(1_000_000) - 1000;
    case 2: return rng.pick(ODD_STRINGS);
    case 3: return rng.chance(0.5);
    case 4: return Array.from({ length: rng.int(5) }, () => randomJson(rng, depth + 1));
    default: {
      const keys = ['vmid', 'name', 'state', 'stack', 'tailscale_ip', 'enabled', 'schedule', 'config', 'role', 'username', 'password', 'instances', 'jobs', 'job_runs', 'version', 'random_id', 'status', rng.pick(ODD_STRINGS)];
      return Object.fromEntries(Array.from({ length: rng.int(6) }, () => [rng.pick(keys), randomJson(rng, depth + 1)]));
    }
  }
}

/** A valid body for each route, the start of the mutations. */
function seedBody(route: Route, rng: Rng): unknown {
  const key = `${route.method} ${route.path}`;
  if (key === 'POST /api/instances') return buildInstance({ vmid: 1 + rng.int(50), stack: rng.pick(['development', 'production']) });
  if (key === 'PUT /api/instances/:vmid') return { state: rng.pick(['testing', 'degraded']), tailscale_ip: '100.64.0.1', atlas: 1, vmid: 1 + rng.int(50) };
  if (key === 'POST /api/auth/login') return { username: 'fuzzed', password: 'not-the-password' };
  if (key === 'POST /api/auth/password') return { current_password: 'not-the-password', new_password: 'another-password' };
  if (key === 'POST /api/users') return { username: `user${rng.int(100000)}`, display_name: 'Fuzzed', role: rng.pick(['viewer', 'operator', 'administrator']) };
  if (key === 'PATCH /api/users/:id') return { display_name: 'Renamed', role: rng.pick(['viewer', 'operator']), enabled: rng.chance(0.5) };
  if (key === 'POST /setup') return { setup_token: 'x', username: 'first', display_name: 'First', password: 'first-password' };
  if (key === 'POST /api/telemetry') return rng.chance(0.5) ? { kind: 'match', players: 4 } : [{ kind: 'a' }, { kind: 'b' }];
  if (key === 'PUT /api/jobs/:id') return { enabled: rng.chance(0.5), schedule: 1 + rng.int(100), config: { api_url: LOOPBACK_URL, api_token: 'tok:en', api_key: 'key', run_on_create: rng.chance(0.3) } };
  if (key === 'POST /api/import') {
    return {
      version: rng.pick([1, 2, 3]),
      instances: Array.from({ length: rng.int(4) }, (_, i) => buildInstance({ vmid: 100 + i })),
      ...(rng.chance(0.5) ? { jobs: [{ id: 1, key: 'semaphore_sync', name: 'S', description: 'd', enabled: 0, schedule: 5, config: { api_url: LOOPBACK_URL } }], job_runs: [] } : {}),
    };
  }
  if (key === 'POST /api/usage/upload') {
    return { ct_type: 1, type: 'lxc', disk_size: 8, core_count: 2, ram_size: 2048, os_type: 'debian', os_version: '12', disableip6: 'no', nsapp: 'app', method: 'default', pve_version: '8.2.4', status: 'installing', random_id: crypto.randomUUID() };
  }
  if (key === 'POST /api/notifications/channels' || key === 'PUT /api/notifications/channels/:id') {
    const type = rng.pick(['webhook', 'ntfy', 'gotify', 'discord', 'email']);
    const config = { url: LOOPBACK_URL, server: LOOPBACK_URL, webhook_url: LOOPBACK_URL, topic: 't', token: 'tok', secret: 'se\ncret', host: '127.0.0.1', port: 9, from: 'a@example.org', to: 'b@example.org' };
    return { name: `channel ${rng.int(1000)}`, type, config, rules: rng.chance(0.5) ? 'all' : ['host.offline'], min_severity: rng.pick(['info', 'warning', 'critical']), ...(rng.chance(0.3) ? { quiet_hours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' } } : {}) };
  }
  if (key === 'POST /api/server-keys') return { name: `key ${rng.int(1000)}`, public_key: rng.pick([ed25519Line(), skEcdsaLine(), '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE=\n-----END OPENSSH PRIVATE KEY-----\n']) };
  if (key === 'POST /api/cloud-configs' || key === 'PUT /api/cloud-configs/:id') {
    return { name: `config ${rng.int(1000)}`, description: 'fuzzed', body: rng.pick(['#cloud-config\npackages: [curl]\n', '#cloud-config\nusers: [{ssh_authorized_keys: [x]}]\n', '#cloud-config\na: &a [*a]\n']) };
  }
  if (key === 'PUT /api/alerts/rules/:rule') return { enabled: rng.chance(0.5), severity: rng.pick(['info', 'warning', 'critical']), for_s: rng.int(1000), percent: 1 + rng.int(100) };
  if (key === 'POST /api/usage/upload/updatestatus') return { status: 'done', error: 'none', random_id: crypto.randomUUID() };
  return {};
}

/** JSON-level mutations: drop, retype, add or inflate fields, nest. */
function mutate(value: unknown, rng: Rng): unknown {
  if (Array.isArray(value)) {
    const copy = value.map((v) => (rng.chance(0.3) ? mutate(v, rng) : v));
    if (rng.chance(0.2)) copy.push(randomJson(rng));
    if (rng.chance(0.1)) copy.splice(rng.int(copy.length + 1), 1);
    return copy;
  }
  if (value && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    for (let i = 1 + rng.int(3); i > 0; i--) {
      const op = rng.int(5);
      const k = keys.length ? rng.pick(keys) : 'x';
      if (op === 0) delete copy[k];
      else if (op === 1) copy[k] = randomJson(rng);
      else if (op === 2) copy[rng.pick(ODD_STRINGS)] = randomJson(rng);
      else if (op === 3) copy[k] = mutate(copy[k], rng);
      else copy[k] = rng.pick(ODD_VALUES);
    }
    return copy;
  }
  return rng.chance(0.5) ? randomJson(rng) : value;
}

/** Byte-level damage to a serialized body. */
function damage(text: string, rng: Rng): string {
  let out = text;
  for (let i = 1 + rng.int(4); i > 0; i--) {
    const at = rng.int(out.length + 1);
    const op = rng.int(4);
    if (op === 0) out = out.slice(0, at) + out.slice(at + 1 + rng.int(5));
    else if (op === 1) out = out.slice(0, at) + rng.pick(['{', '}', '[', ']', '"', '\\', ',', ':', '\u0000', '\ud800', 'é', 'null', '1e999']) + out.slice(at);
    else if (op === 2) out = out.slice(0, at);
    else out = out + out.slice(0, rng.int(50));
  }
  return out;
}

/**
 * The safety rule: a job's remote is 127.0.0.1 whatever the fuzzer made of the body (a job with no
 * api_url would call the real Tailscale). Job settings and imports are parsed, their configs pinned
 * to a loopback URL, and sent re-serialized; bodies that do not parse never reach a config.
 */
function pinJobUrls(route: Route, text: string): string {
  if (!route.path.startsWith('/api/jobs') && route.path !== '/api/import' && !route.path.startsWith('/api/notifications')) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  // Notification channels send to url, server or webhook_url (or an SMTP host): all pinned to loopback too.
  const pin = (config: unknown) => {
    if (config && typeof config === 'object' && !Array.isArray(config)) {
      const c = config as Record<string, unknown>;
      c.api_url = LOOPBACK_URL;
      if (route.path.startsWith('/api/notifications')) Object.assign(c, { url: LOOPBACK_URL, server: LOOPBACK_URL, webhook_url: LOOPBACK_URL, host: '127.0.0.1' });
    }
  };
  if (!value || typeof value !== 'object' || Array.isArray(value)) return text;
  const v = value as Record<string, unknown>;
  pin(v.config);
  if (Array.isArray(v.jobs)) for (const job of v.jobs) if (job && typeof job === 'object') pin((job as Record<string, unknown>).config);
  try {
    return JSON.stringify(value);
  } catch {
    return '{}'; // too deep to re-serialize: send nothing that could hold a config
  }
}

const BAD_SEGMENTS = ['%ff', '%zz', '%', '%e0%a4%a', '%00', '%2e%2e', '..', 'abc', '1.5', '-1', '0', '99999999999999999999', '%F0%9F%98%80', ' 1', '1;2', 'null'];

function fillPath(route: Route, rng: Rng): string {
  // Account 1 is the fuzzer's own administrator: user routes aim at the others, so fewer requests stop at the guard.
  const low = route.path.startsWith('/api/users/') ? 2 : 1;
  let path = route.path.replace(/:(\w+)/g, () => (rng.chance(0.7) ? String(low + rng.int(rng.chance(0.5) ? 5 : 120)) : rng.pick(BAD_SEGMENTS)));
  if (rng.chance(0.05)) path += rng.pick(['/', '/%ff', '/x', '//']);
  if (rng.chance(0.1)) path += `?${rng.pick(['a=%ff', 'limit=-1', '%zz', 'a[b]=c', 'x=' + 'y'.repeat(2000)])}`;
  return path;
}

function encode(body: Buffer, rng: Rng): { body: Buffer; encoding?: string } {
  const r = rng.int(20);
  if (r === 0) return { body: zlib.gzipSync(body), encoding: 'gzip' };
  if (r === 1) return { body: zlib.deflateSync(body), encoding: 'deflate' };
  if (r === 2) return { body: zlib.brotliCompressSync(body), encoding: 'br' };
  if (r === 3) return { body, encoding: rng.pick(['gzip', 'deflate', 'br']) }; // claims an encoding it does not have
  if (r === 4) return { body: zlib.gzipSync(body).subarray(0, 12), encoding: 'gzip' }; // truncated
  if (r === 5) return { body, encoding: rng.pick(['compress', 'gzip, br', 'identity', 'x-unknown', '']) };
  return { body };
}

const CONTENT_TYPES = ['application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16', 'application/json; charset=utf-7', 'application/json; charset=latin1', 'application/json; charset=bogus', 'application/json; charset="utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=UTF-7-IMAP', 'multipart/form-data; boundary=x', 'application/*+json', ''];

let server: BuiltServer;
let dbPath: string;
/** The test's own connection to the server's database file: accounts, sessions and repairs go through it. */
let db: Db;
let accounts: ReturnType<typeof createAccountService>;
let cookie: string;
const session = (accountId: number) => `homefleet_session_dev=${accounts.sessions.issue(accountId)}`;

beforeAll(async () => {
  dbPath = tempDbPath();
  db = openDatabase(dbPath);
  const data = { ...createDataContext(db), clock: systemClock };
  accounts = createAccountService(data, createAuditLog(data));
  const admin = await accounts.create({ username: 'admin', display_name: 'Administrator', role: 'administrator', password: ADMIN_PASSWORD });
  // The server's job runs may reach nothing but loopback, whatever the fuzzer made of a job (pinJobUrls is the first guard).
  server = await startBuiltServer(
    { DB_PATH: dbPath, FLEET_TELEMETRY_TOKEN: TELEMETRY_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' },
    ['--import', path.join(import.meta.dirname, 'fixtures', 'loopback-only.mjs')],
  );
  cookie = session(admin.id);
});
afterAll(async () => {
  await server?.stop();
  db?.close();
  removeTempDbs();
});

describe('client mistakes are 4xx with a clear message', () => {
  const json = () => ({ cookie, origin: server.url, 'content-type': 'application/json' });

  it.each([
    ['GET', '/api/instances/%ff'],
    ['PUT', '/api/instances/%ff'],
    ['DELETE', '/api/instances/%E0%A4%A'],
    ['GET', '/api/users/%zz'],
    ['PATCH', '/api/users/%zz'],
    ['POST', '/api/jobs/%ff/run'],
    ['GET', '/api/instances/%ff/history'],
  ])('%s %s: 400 malformed percent-encoding', async (method, path) => {
    const res = await send(server.url, method, path, json(), method === 'GET' || method === 'DELETE' ? undefined : Buffer.from('{}'));
    expect(res).toEqual({ status: 400, body: '{"error":"malformed percent-encoding in the path"}' });
  });

  it.each([
    ['gzip', Buffer.from('this is not gzip')],
    ['deflate', Buffer.from('nor deflate')],
    ['br', Buffer.from('nor brotli!!')],
    ['gzip', zlib.gzipSync('{"vmid":1}').subarray(0, 12)],
  ])('a body whose Content-Encoding (%s) does not decode: 400', async (encoding, body) => {
    const res = await send(server.url, 'POST', '/api/instances', { ...json(), 'content-encoding': encoding }, body);
    expect(res).toEqual({ status: 400, body: '{"error":"request body does not match its Content-Encoding"}' });
  });

  it('an unknown Content-Encoding: 415', async () => {
    const res = await send(server.url, 'POST', '/api/instances', { ...json(), 'content-encoding': 'compress' }, Buffer.from('{}'));
    expect(res).toEqual({ status: 415, body: '{"error":"unsupported content encoding"}' });
  });
});

describe(`fuzzing every write route (${REQUESTS} requests, seed ${SEED})`, () => {
  it('gives no answer of 500 or above and leaves a sound database', { timeout: BUDGET_MS + 30_000 }, async () => {
    const rng = prng(SEED);
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary: string }>> };
    const writes: Route[] = Object.values(doc.paths).flatMap((ops) =>
      Object.entries(ops).filter(([m]) => m !== 'get').map(([, op]) => ({ method: op.summary.split(' ')[0]!, path: op.summary.split(' ')[1]! })),
    );
    expect(writes.length).toBeGreaterThanOrEqual(15);
    const admin = accounts.repo.byUsername('admin')!;
    const spare = await accounts.create({ username: 'spare', display_name: 'Spare', role: 'administrator', password: 'spare-password-1' });

    // The fuzzer may log its administrator out, reset, demote or disable it; it is put back directly,
    // so the requests keep reaching the handlers instead of stopping at the access guard.
    const repair = () => {
      db.prepare("UPDATE accounts SET role = 'administrator', enabled = 1, must_change_password = 0 WHERE id = ?").run(admin.id);
      cookie = session(admin.id);
    };

    const failures: string[] = [];
    const byStatus: Record<number, number> = {};
    const perRoute = new Map<string, number>();
    let sent = 0;
    let lost = 0;
    const deadline = Date.now() + BUDGET_MS;

    const one = async () => {
      const route = writes[sent % writes.length]!; // round-robin: every write route gets its share
      sent++;
      let method: string = route.method;
      let path = fillPath(route, rng);
      if (rng.chance(0.03)) path = rng.pick(['/api/%ff', '/%', '/api/instances/%ff/history', '/api//instances', '/setup/%zz', '/api/jobs/1/run/%ff']);
      if (rng.chance(0.02)) method = rng.pick(['PATCH', 'PUT', 'DELETE', 'POST', 'OPTIONS']);

      let text: string;
      const shape = rng.int(10);
      if (shape <= 2) text = JSON.stringify(seedBody(route, rng));
      else if (shape <= 5) text = JSON.stringify(mutate(seedBody(route, rng), rng));
      else if (shape === 6) text = damage(JSON.stringify(seedBody(route, rng)), rng);
      else if (shape === 7) text = JSON.stringify(randomJson(rng));
      else if (shape === 8) text = rng.pick(['', 'null', '42', '"x"', '[]', '{}', '[1,2]', '{"a":', '\u0000', '\ufeff{}', '{"__proto__":{"x":1}}', '['.repeat(5000) + ']'.repeat(5000), '{"a":'.repeat(2000), `{"deep":${'['.repeat(20000)}${']'.repeat(20000)}}`, `[{"deep":${'{"a":'.repeat(20000)}1${'}'.repeat(20000)}}]`]);
      else text = Buffer.from(Array.from({ length: rng.int(300) }, () => rng.int(256))).toString('latin1');
      text = pinJobUrls(route, text);

      const headers: Record<string, string> = { cookie, origin: server.url };
      // Logout ends the session it is sent with: it gets one of its own, of a second administrator.
      if (route.path === '/api/auth/logout') headers.cookie = session(spare.id);
      const type = rng.pick(CONTENT_TYPES);
      if (type) headers['content-type'] = type;
      if (route.path === '/api/telemetry') headers.authorization = `Bearer ${rng.chance(0.9) ? TELEMETRY_TOKEN : 'wrong'}`;
      let body: Buffer | undefined = method === 'DELETE' && rng.chance(0.7) ? undefined : Buffer.from(text, rng.chance(0.05) ? 'latin1' : 'utf8');
      if (body) {
        const encoded = encode(body, rng);
        body = encoded.body;
        if (encoded.encoding !== undefined) headers['content-encoding'] = encoded.encoding;
      }

      const res = await send(server.url, method, path, headers, body);
      byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
      perRoute.set(`${route.method} ${route.path}`, (perRoute.get(`${route.method} ${route.path}`) ?? 0) + 1);
      if (res.status >= 500 && !(route.path === '/api/jobs/:id/run' && res.status === 500 && !res.body.includes('internal error'))) {
        // Run-now's 500 with the handler's error text is the registry spec's answer, not a crash.
        failures.push(`${res.status} ${method} ${path} [${headers['content-type'] ?? '-'} / ${headers['content-encoding'] ?? '-'}] ${text.slice(0, 120)} → ${res.body}`);
      }
      const lostSession = (res.status === 401 && res.body.includes('authentication required')) || (res.status === 403 && /password change required|"forbidden"/.test(res.body));
      if (lostSession) {
        lost++;
        // Only the request that used the current cookie repairs: the others carried one already replaced.
        if (headers.cookie === cookie) repair();
      }
    };

    const worker = async () => {
      while (sent < REQUESTS && Date.now() < deadline) await one();
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    // A summary for the person running the full count.
    console.log(`fuzz: ${sent} requests, seed ${SEED}, statuses ${JSON.stringify(byStatus)}, ${perRoute.size} routes, ${lost} answers without the session (repaired)`);
    expect(sent, 'the time budget ran out before every request was sent').toBe(REQUESTS);
    expect(failures.slice(0, 20)).toEqual([]);
    expect([...perRoute.keys()].sort()).toEqual(writes.map((r) => `${r.method} ${r.path}`).sort());
    expect((await send(server.url, 'GET', '/api/health', {})).status).toBe(200);
    expect(server.running()).toBe(true);

    const exited = await server.stop();
    expect(exited.exitCode, exited.all.slice(-2000)).toBe(0);
    db.close();
    const file = openRetained(dbPath, { readonly: true });
    try {
      expect(file.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(file.pragma('foreign_key_check')).toEqual([]);
    } finally {
      file.close();
    }
  });
});
