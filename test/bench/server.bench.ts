// The server's speed targets (PRODUCT.md "Scale and speed targets"), each printed as a ratio against
// a bare node:http + better-sqlite3 baseline measured in the same run. Run with `npm run bench:server`.
// All traffic goes to servers this file starts on 127.0.0.1; every loop is bounded.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { openDatabase } from '../../server/db/database.js';
import { isoMillis, isoSeconds } from '../../server/time.js';
import { TestClient } from '../helpers/http.js';
import { compare, listen, load, meets, quantile, report, request, serveApp } from './harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-'));
const root = path.resolve(import.meta.dirname, '../..');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const lines: string[] = [];
afterAll(() => console.log(`\n${lines.join('\n')}\n`));

const PASSWORD = 'bench-password-1234';
const INSTANCE_COLUMNS = 'vmid, name, state, stack, tailscale_ip, atlas, argus, semaphore, patchmon, tailscale, andromeda, hardware_acceleration, created_at, updated_at';

function rows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    vmid: i + 1,
    name: `vm-${i + 1}`,
    state: ['deployed', 'testing', 'degraded'][i % 3]!,
    stack: i % 4 ? 'development' : 'production',
  }));
}

/** homefleet on a temp-file database with an administrator signed in through the real login route. */
async function homefleetWithSession(name: string) {
  const homefleet = createApp({ dbPath: path.join(dir, `${name}.db`), config: { authAllowHttp: true } });
  await homefleet.accounts.create({ username: 'bench', display_name: 'Bench', role: 'administrator', password: PASSWORD }, { actor: null, ip: null });
  const server = await serveApp(homefleet.app);
  const client = new TestClient(server.url);
  const login = await client.post('/api/auth/login', { username: 'bench', password: PASSWORD });
  expect(login.status).toBe(200);
  const headers = { cookie: client.cookieHeader(), origin: server.url };
  return { homefleet, server, headers, async close() { await server.close(); await homefleet.close(); } };
}

/** The bare baseline's database: the same schema, opened the same way. */
const bareDatabase = (name: string) => openDatabase(path.join(dir, `${name}.db`));

describe('server benchmarks', () => {
  it('lists 10,000 instances with search and sort at >= 0.95 of the bare baseline', async () => {
    const app = await homefleetWithSession('list');
    // Names as in a homelab: one in eight is a web-NNNN, so search=web finds 1,250 of the 10,000.
    const names = ['web', 'db', 'cache', 'proxy', 'media', 'git', 'dns', 'vault'];
    app.homefleet.db.transaction(() => {
      for (const [i, row] of rows(10_000).entries()) app.homefleet.instances.create({ ...row, name: `${names[i % names.length]}-${i + 1}` });
    })();
    const copy = bareDatabase('list-bare');
    copy.exec(`ATTACH '${path.join(dir, 'list.db')}' AS src; INSERT INTO instances SELECT * FROM src.instances; DETACH src;`);
    const query = copy.prepare(
      `SELECT ${INSTANCE_COLUMNS} FROM instances
        WHERE (name LIKE ? ESCAPE '\\' OR CAST(vmid AS TEXT) LIKE ? ESCAPE '\\' OR stack LIKE ? ESCAPE '\\')
        ORDER BY updated_at DESC, id DESC`,
    );
    const bare = await listen((req, res) => {
      const like = `%${new URL(req.url!, 'http://x').searchParams.get('search') ?? ''}%`;
      const body = JSON.stringify(query.all(like, like, like));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const path_ = '/api/instances?search=web&sort=updated_at&order=desc';
    // This machine's timing swings between runs; more alternating rounds, each side's best kept.
    const result = await compare(
      7,
      () => load(150, 4, () => fetch(bare.url + path_), 200),
      () => load(150, 4, () => fetch(app.server.url + path_, { headers: app.headers }), 200),
    );
    lines.push(report('list 10k, search=web&sort=updated_at&order=desc', result, '>= 0.95'));
    await bare.close();
    copy.close();
    await app.close();
  });

  it('creates instances (session, Origin, validation, history, audit) at >= 0.60 of a bare transaction', async () => {
    const app = await homefleetWithSession('create');
    const db = bareDatabase('create-bare');
    const insert = db.prepare(`INSERT INTO instances (${INSTANCE_COLUMNS}) VALUES (?, ?, ?, ?, '', 0, 0, 0, 0, 0, 0, 0, ?, ?)`);
    const history = db.prepare("INSERT INTO instance_history (instance_id, field, changed_at) VALUES (?, 'created', ?)");
    const write = db.transaction((row: { vmid: number; name: string; state: string; stack: string }) => {
      const now = Date.now();
      const id = insert.run(row.vmid, row.name, row.state, row.stack, isoSeconds(now), isoSeconds(now)).lastInsertRowid;
      history.run(id, isoMillis(now));
    });
    const bare = await listen((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const row = JSON.parse(body);
        write(row);
        const out = JSON.stringify(row);
        res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
        res.end(out);
      });
    });
    let bareVmid = 0;
    let appVmid = 0;
    const post = (url: string, vmid: number, headers: Record<string, string> = {}) =>
      fetch(`${url}/api/instances`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ vmid, name: `vm-${vmid}`, state: 'deployed', stack: 'development' }),
      });
    const result = await compare(
      7,
      () => load(1000, 4, () => post(bare.url, ++bareVmid), 201),
      () => load(1000, 4, () => post(app.server.url, ++appVmid, app.headers), 201),
    );
    lines.push(report('create (session, Origin, validation, history, audit) vs a bare instance + history transaction', result, '>= 0.6'));
    await bare.close();
    db.close();
    await app.close();
  });

  it('imports 100,000 instances within 1.2x of a bare transaction, and memory does not grow across imports', async () => {
    const app = await homefleetWithSession('import');
    const document = JSON.stringify({
      version: 3,
      exported_at: new Date().toISOString(),
      instances: rows(100_000).map((row) => ({
        ...row,
        tailscale_ip: '',
        atlas: 0, argus: 1, semaphore: 0, patchmon: 1, tailscale: 0, andromeda: 0, hardware_acceleration: 0,
        created_at: '2026-11-22T10:00:00Z',
        updated_at: '2026-11-22T10:00:00Z',
      })),
    });
    const db = bareDatabase('import-bare');
    const insert = db.prepare(`INSERT INTO instances (${INSTANCE_COLUMNS}) VALUES (@vmid, @name, @state, @stack, @tailscale_ip, @atlas, @argus, @semaphore, @patchmon, @tailscale, @andromeda, @hardware_acceleration, @created_at, @updated_at)`);
    const history = db.prepare("INSERT INTO instance_history (instance_id, field, changed_at, changed_by) SELECT id, 'imported', ?, 'import' FROM instances");
    const replace = db.transaction((instances: Record<string, unknown>[]) => {
      db.exec('DELETE FROM instance_history; DELETE FROM instances;');
      for (const row of instances) insert.run(row);
      history.run(new Date().toISOString());
    });
    const timed = async (fn: () => Promise<void> | void) => {
      const started = process.hrtime.bigint();
      await fn();
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const bareRun = () => timed(() => replace(JSON.parse(document).instances));
    const appRun = () =>
      timed(async () => {
        const res = await fetch(`${app.server.url}/api/import`, { method: 'POST', headers: { 'content-type': 'application/json', ...app.headers }, body: document });
        expect(res.status).toBe(200);
        expect(await res.json()).toEqual({ imported: 100_000 });
      });
    const memory: number[] = [];
    let best = { bare: Infinity, app: Infinity };
    for (let round = 0; round < 4; round++) {
      best = { bare: Math.min(best.bare, await bareRun()), app: Math.min(best.app, await appRun()) };
      globalThis.gc?.();
      memory.push(process.memoryUsage().heapUsed);
    }
    const ratio = best.app / best.bare;
    const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
    lines.push(
      `import 100k (${mb(document.length)} MB): homefleet ${best.app.toFixed(0)} ms, bare transaction ${best.bare.toFixed(0)} ms, ratio ${ratio.toFixed(3)} (target <= 1.2)`,
      `import memory after each of 4 imports (heap after GC): ${memory.map(mb).join(', ')} MB; growth from 2nd to 4th ${mb(memory[3]! - memory[1]!)} MB`,
    );
    expect((await fetch(`${app.server.url}/api/instances/100000`, { headers: app.headers })).status).toBe(200);
    db.close();
    await app.close();
  });

  it('keeps reads fast while ten logins hash passwords', async () => {
    const app = await homefleetWithSession('logins');
    for (let i = 0; i < 10; i++) {
      await app.homefleet.accounts.create({ username: `user${i}`, display_name: `User ${i}`, role: 'viewer', password: PASSWORD }, { actor: null, ip: null });
    }
    // Reads and logins go through node:http on their own keep-alive pools (see `request`): with fetch, the
    // client's own work and its responses surviving young-generation collections were most of the tail.
    const read = () => load(3000, 1, () => request(`${app.server.url}/api/instances/stacks`, { headers: app.headers, agent: 'reads' }), 200);
    let logins = 0;
    /** Reads while ten accounts sign in over and over (each login hashes its password with scrypt). */
    const readDuringLogins = async () => {
      let logging = true;
      const loginLoops = Array.from({ length: 10 }, async (_, i) => {
        while (logging) {
          const res = await request(`${app.server.url}/api/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', origin: app.server.url },
            body: JSON.stringify({ username: `user${i}`, password: PASSWORD }),
            agent: 'logins',
          });
          expect(res.status).toBe(200);
          logins++;
        }
      });
      const result = await read();
      logging = false;
      await Promise.all(loginLoops);
      return result;
    };
    // Alternating rounds (this machine is shared and noisy); each side's lowest p99 is kept.
    let best = { alone: Infinity, during: Infinity };
    // Warm-up of both sides: the first rounds compile the read and login paths.
    let alone = await read();
    let during = await readDuringLogins();
    logins = 0;
    for (let round = 0; round < 3; round++) {
      alone = await read();
      during = await readDuringLogins();
      best = { alone: Math.min(best.alone, quantile(alone.latencies, 0.99)), during: Math.min(best.during, quantile(during.latencies, 0.99)) };
    }
    const p99 = best;
    const ratio = p99.during / p99.alone;
    lines.push(
      `reads during 10 parallel logins: p99 ${p99.during.toFixed(2)} ms, floor (idle) p99 ${p99.alone.toFixed(2)} ms, ratio ${ratio.toFixed(2)} (goal <= 2) ${meets(ratio, '<= 2')}; last round ${during.perSecond.toFixed(0)}/s vs ${alone.perSecond.toFixed(0)}/s, ${logins} logins meanwhile`,
    );
    await app.close();
  });

  it('starts to a healthy /api/health on an existing database within a few hundred milliseconds', async () => {
    const dbPath = path.join(dir, 'startup.db');
    const seeded = createApp({ dbPath });
    seeded.db.transaction(() => {
      for (const row of rows(10_000)) seeded.instances.create(row);
    })();
    await seeded.close();
    await execa(process.execPath, ['build/build.mjs', '--if-missing'], { cwd: root });

    /** Spawns a process, polls its health URL on loopback until 200; returns ms to healthy and its RSS then. */
    const startAndProbe = async (args: string[], env: Record<string, string>, settleMs = 0) => {
      const started = performance.now();
      const child = execa(process.execPath, args, { cwd: root, env: { ...env, LOG_LEVEL: 'silent' }, reject: false });
      const port = Number(env.PORT);
      const deadline = started + 10_000;
      let ms = NaN;
      while (performance.now() < deadline) {
        const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false);
        if (ok) {
          ms = performance.now() - started;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const rssNow = () => Number(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? NaN) / 1024;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const rss = rssNow();
      // Idle longer, and V8's memory reducer (it runs some seconds after the heap stops growing)
      // hands back what start-up left behind: the RSS a server that sits idle actually keeps.
      let settled = NaN;
      if (settleMs) {
        await new Promise((resolve) => setTimeout(resolve, settleMs));
        settled = rssNow();
      }
      child.kill('SIGTERM');
      await child;
      return { ms, rss, settled };
    };
    const bareScript = `const D=require('better-sqlite3');const db=new D(process.env.DB_PATH);db.pragma('journal_mode=WAL');const q=db.prepare('SELECT 1');require('http').createServer((q2,r)=>{q.get();r.end('{"status":"ok"}')}).listen(+process.env.PORT,'127.0.0.1')`;
    // Alternating rounds, each side's fastest start kept; the idle RSS is the median of homefleet's rounds.
    const bareMs: number[] = [];
    const appRuns: { ms: number; rss: number }[] = [];
    const SETTLE_MS = 15_000;
    let bareRss = NaN;
    for (let round = 0; round < 5; round++) {
      const bare = await startAndProbe(['-e', bareScript], { DB_PATH: dbPath, PORT: '39411' });
      bareMs.push(bare.ms);
      bareRss = bare.rss;
      appRuns.push(await startAndProbe(['dist/server/main.js'], { DB_PATH: dbPath, PORT: '39412', HOST: '127.0.0.1' }));
    }
    const app = { ms: Math.min(...appRuns.map((r) => r.ms)), rss: appRuns.map((r) => r.rss).sort((a, b) => a - b)[2]! };
    // One more start of each, left idle for the memory reducer: printed as a measure, the goal is judged at 1 s.
    const bareIdle = await startAndProbe(['-e', bareScript], { DB_PATH: dbPath, PORT: '39411' }, SETTLE_MS);
    const appIdle = await startAndProbe(['dist/server/main.js'], { DB_PATH: dbPath, PORT: '39412', HOST: '127.0.0.1' }, SETTLE_MS);
    const bareBest = Math.min(...bareMs);
    const ratio = app.ms / bareBest;
    lines.push(
      `start to healthy on an existing 10k database: homefleet ${app.ms.toFixed(0)} ms, floor node -e "require('better-sqlite3')" + node:http ${bareBest.toFixed(0)} ms, ratio ${ratio.toFixed(2)} (goal <= 2.5) ${meets(ratio, '<= 2.5')}`,
      `idle RSS 1 s after start: homefleet ${app.rss.toFixed(1)} MB (goal <= 60) ${app.rss <= 60 ? 'met' : 'NOT MET'}; bare ${bareRss.toFixed(1)} MB`,
      `idle RSS ${(1 + SETTLE_MS / 1000).toFixed(0)} s after start (after V8's memory reducer; a measure, not the goal's): homefleet ${appIdle.settled.toFixed(1)} MB, bare ${bareIdle.settled.toFixed(1)} MB`,
    );
    expect(app.ms).toBeLessThan(10_000);
  });
});
