#!/usr/bin/env node
// `npm run bench:server`: homefleet's request path against its floor, measured from outside.
//
// Three kinds of process, each with its own event loop and heap: the built server
// (dist/server/main.js, the documented way to run it, logging at its default level to a file), the floor
// (floor-server.mjs: bare node:http + better-sqlite3 running the same SQL on a copy of the same
// database), and the load generator (load.mjs: node:http keep-alive client, 16 connections). This
// script only seeds, starts, stops and prints; it is idle while a round runs. Rounds alternate
// floor/homefleet (ABBA, so neither side always runs second), after one warm-up of each, and each
// goal is judged on the median of the rounds' ratios: the machine is shared, and a burst of someone
// else's work lands on one round rather than on one side.
//
// Prints a table of goal, measured value and whether it is met; exits 1 when a goal is not met.
// All traffic goes to servers started here on 127.0.0.1; every loop is bounded in time.
//   BENCH_ROUNDS=7 BENCH_SECONDS=2   rounds per measure and seconds per throughput round
//   BENCH_ONLY=search,create         run some measures only (search, list, create, logins, import, start)
//   BENCH_CPU_PROF=dir               both servers run with --cpu-prof, their profiles written there on exit
//   BENCH_ROOT=dir                   measure another checkout's build (its dist/ and build/start.cjs)
//   BENCH_KEEP=1                     keep the temporary folder (seeded databases, the servers' log) and print its path
import { fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../build/headless-server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(process.env.BENCH_ROOT ?? path.join(here, '../..'));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ONLY = process.env.BENCH_ONLY?.split(',');
const runs = (measure) => !ONLY || ONLY.includes(measure);
const CONNECTIONS = 16;
const INSTANCES = 10_000;
const IMPORTED = 100_000;
const PASSWORD = 'bench-password-1234';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-server-'));
const logFile = path.join(dir, 'servers.log');
const log = fs.openSync(logFile, 'a');
const children = new Set();
const spawned = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  if (process.env.BENCH_KEEP) console.log(`bench:server: kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Spawns a program; its output goes to the log file (a terminal or journald in real use; a file costs the
 * least here). The environment is clean: a variable such as NODE_EXTRA_CA_CERTS (read at every Node
 * start, 30 ms on this machine) would add the same to both sides of the start-up ratio and blur it.
 */
function start(command, args, env, cwd = root) {
  const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME ?? dir, ...env }, stdio: ['ignore', log, log] });
  children.add(child);
  spawned.push(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.stopping = true;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const healthy = (port) =>
  new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/api/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
  });

/** Milliseconds from `since` until /api/health answers 200 (polled every 2 ms), or an error when `child` exits first. */
async function untilHealthy(port, child, since = performance.now()) {
  while (performance.now() - since < 20_000) {
    if (await healthy(port)) return performance.now() - since;
    if (child.exitCode !== null) throw new Error(`${child.spawnargs.join(' ')} exited with ${child.exitCode}; see the log: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    await sleep(2);
  }
  throw new Error(`${child.spawnargs.join(' ')} was not healthy within 20 s`);
}

/** With BENCH_CPU_PROF, node's --cpu-prof options: the server's profile is written there when it stops. */
const profile = (name) =>
  process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [];

/** The built homefleet server on `dbPath`, started as `node dist/server/main.js` (with --cpu-prof when asked). */
async function startHomefleet(dbPath) {
  const port = await freePort();
  const child = start(process.execPath, [...profile('homefleet'), path.join(root, 'dist/server/main.js')], {
    PORT: String(port), HOST: '127.0.0.1', DB_PATH: dbPath, FLEET_SETUP_TOKEN: 'bench-setup-token', FLEET_AUTH_ALLOW_HTTP: 'true',
  });
  await untilHealthy(port, child);
  return { url: `http://127.0.0.1:${port}`, child };
}

async function startFloor(dbPath) {
  const port = await freePort();
  const child = start(process.execPath, [...profile('floor'), path.join(here, 'floor-server.mjs')], { PORT: String(port), DB_PATH: dbPath });
  await untilHealthy(port, child);
  return { url: `http://127.0.0.1:${port}`, child };
}

/** The load generator: one forked process, one command at a time. */
const loader = fork(path.join(here, 'load.mjs'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
children.add(loader);
let nextId = 0;
const pending = new Map();
loader.on('message', ({ id, result, error }) => {
  const { resolve, reject } = pending.get(id);
  pending.delete(id);
  if (error) reject(new Error(`load generator: ${error}`));
  else resolve(result);
});
const load = (command, args) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  loader.send({ id, command, args });
});

/** A homelab of 10,000: one name in ten is web-N, so search=web finds 1,000; times spread over a year, not in row order. */
function registry() {
  const names = ['web', 'db', 'cache', 'proxy', 'media', 'git', 'dns', 'vault', 'mail', 'ci'];
  const year = Date.UTC(2026, 0, 1);
  const iso = (ms) => new Date(ms).toISOString().slice(0, 19) + 'Z';
  return Array.from({ length: INSTANCES }, (_, i) => {
    const created = year + ((i * 7919) % INSTANCES) * 3_000_000;
    return {
      vmid: 1000 + i,
      name: `${names[i % names.length]}-${i + 1}`,
      state: ['deployed', 'deployed', 'testing', 'degraded'][i % 4],
      stack: i % 3 ? 'development' : 'production',
      tailscale_ip: i % 2 ? '' : `100.64.${(i >> 8) & 255}.${i & 255}`,
      tailscale: i % 2 ? 0 : 1,
      argus: i % 5 ? 0 : 1,
      created_at: iso(created),
      updated_at: iso(created + ((i * 104_729) % 1000) * 60_000),
    };
  });
}

/** Sets homefleet up through its own routes: the administrator, ten viewers to sign in, 10,000 instances. */
async function seed(url) {
  const call = async (method, pathname, body, cookie) => {
    const res = await fetch(url + pathname, {
      method,
      headers: { 'content-type': 'application/json', origin: url, ...(cookie ? { cookie } : {}) },
      body: body && JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`seeding: ${method} ${pathname}: ${res.status} ${text}`);
    return { json: JSON.parse(text), cookie: res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ') };
  };
  await call('POST', '/setup', { setup_token: 'bench-setup-token', username: 'bench', display_name: 'Bench', password: PASSWORD });
  const { cookie } = await call('POST', '/api/auth/login', { username: 'bench', password: PASSWORD });
  const users = [];
  for (let i = 0; i < 10; i++) {
    const { json } = await call('POST', '/api/users', { username: `reader${i}`, display_name: `Reader ${i}`, role: 'viewer' }, cookie);
    users.push({ username: `reader${i}`, password: json.temporary_password });
  }
  await call('POST', '/api/import', { version: 3, instances: registry() }, cookie);
  return { cookie, users };
}

const results = [];
/** One row of the table; `goal` is '>= 0.95', '<= 60' …, or null for a measure printed without one. */
function record(name, goal, value, detail, unit = '') {
  const [op, limit] = goal ? goal.split(' ') : [];
  const met = goal ? (op === '>=' ? value >= Number(limit) : value <= Number(limit)) : null;
  results.push({ name, goal: goal ? `${goal}${unit}` : '-', measured: `${value.toFixed(unit ? 1 : 3)}${unit}`, met, detail });
  console.log(`  ${name}: ${value.toFixed(unit ? 1 : 3)}${unit} (${detail})`);
}

/** One warm-up of each side, then `rounds` rounds in ABBA order; returns the measured pairs. */
async function alternate(rounds, floor, app) {
  await floor();
  await app();
  const pairs = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      const f = await floor();
      pairs.push({ floor: f, app: await app() });
    } else {
      const a = await app();
      pairs.push({ floor: await floor(), app: a });
    }
  }
  return pairs;
}

const perSecond = (pairs) => `homefleet ${median(pairs.map((p) => p.app.perSecond)).toFixed(0)}/s, floor ${median(pairs.map((p) => p.floor.perSecond)).toFixed(0)}/s, medians of ${pairs.length} rounds, ${CONNECTIONS} connections`;

/** CPU time (user + system) a process has used, in ms, from /proc (Linux). */
const cpuMs = (pid) => {
  const fields = readProc(pid, 'stat').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

/** One round of load; also the server's CPU time per request, a second view less swayed by what else runs on the machine. */
async function round(server, request) {
  const before = cpuMs(server.child.pid);
  const client = cpuMs(loader.pid);
  const result = await load('rate', request);
  return { ...result, cpuUs: ((cpuMs(server.child.pid) - before) * 1000) / result.requests, clientUs: ((cpuMs(loader.pid) - client) * 1000) / result.requests };
}

async function throughput(name, goal, floor, app, floorRequest, appRequest) {
  const pairs = await alternate(ROUNDS, () => round(floor, floorRequest()), () => round(app, appRequest()));
  const cpu = (side) => median(pairs.map((p) => p[side].cpuUs)).toFixed(0);
  const client = (side) => median(pairs.map((p) => p[side].clientUs)).toFixed(0);
  const retried = pairs.reduce((sum, p) => sum + p.app.retried + p.floor.retried, 0);
  record(name, goal, median(pairs.map((p) => p.app.perSecond / p.floor.perSecond)), `${perSecond(pairs)}; CPU per request: homefleet ${cpu('app')} µs, floor ${cpu('floor')} µs, client ${client('app')} µs / ${client('floor')} µs${retried ? `; ${retried} request(s) sent again after a keep-alive reset` : ''}`);
}

async function main() {
  console.log(`bench:server: ${ROUNDS} alternating rounds per measure after a warm-up; ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (const folder of ['homefleet', 'floor', 'start']) fs.mkdirSync(path.join(dir, folder));
  const appDb = path.join(dir, 'homefleet', 'homefleet.db');
  const seeding = await startHomefleet(appDb);
  const { cookie, users } = await seed(seeding.url);
  // Stopped, homefleet checkpoints its write-ahead log into the file and removes it: then the floor's
  // copy and homefleet's own database start alike, with every page in the file and none in a log
  // (reading the seeding's pages back through the log made homefleet's search 10% slower than a copy's).
  await stop(seeding.child);
  if (fs.existsSync(`${appDb}-wal`)) throw new Error('homefleet left a write-ahead log behind: its copies would not be the same database');
  fs.copyFileSync(appDb, path.join(dir, 'floor', 'floor.db'));
  fs.copyFileSync(appDb, path.join(dir, 'start', 'homefleet.db'));
  const app = await startHomefleet(appDb);
  const floor = await startFloor(path.join(dir, 'floor', 'floor.db'));
  const session = { cookie, origin: app.url };

  const SEARCH = '?search=web&sort=updated_at&order=desc';
  const UNFILTERED = '?sort=updated_at&order=desc';
  for (const [query, count] of [[SEARCH, 1000], [UNFILTERED, INSTANCES]]) {
    const ours = await load('fetchBody', { url: `${app.url}/api/instances${query}`, headers: session });
    const bare = await load('fetchBody', { url: `${floor.url}/api/instances${query}` });
    if (ours.status !== 200 || ours.body !== bare.body || JSON.parse(ours.body).length !== count) {
      throw new Error(`the servers answer /api/instances${query} differently (${ours.status}, ${ours.size} and ${bare.size} bytes): not the same work`);
    }
  }
  // An unfiltered answer is 2.7 MB: its rounds are longer, or each would hold a few dozen requests.
  const list = (query, seconds = SECONDS) => (server, headers = {}) => () => ({ url: `${server.url}/api/instances${query}`, headers, connections: CONNECTIONS, seconds, expect: 200 });
  if (runs('search')) {
    const search = list(SEARCH);
    await throughput('search list, 1,000 of 10,000 by updated_at (rate vs floor)', '>= 0.95', floor, app, search(floor), search(app, session));
  }
  if (runs('list')) {
    const all = list(UNFILTERED, SECONDS * 3);
    await throughput('unfiltered list of 10,000 by updated_at (rate vs floor)', null, floor, app, all(floor), all(app, session));
  }
  if (runs('create')) {
    const vmids = { floor: 1_000_000, app: 1_000_000 };
    const create = (server, side, headers = {}) => () => ({
      url: `${server.url}/api/instances`, method: 'POST', headers: { 'content-type': 'application/json', ...headers },
      createFrom: (vmids[side] += 1_000_000), connections: CONNECTIONS, seconds: SECONDS, expect: 201,
    });
    await throughput('create with session, Origin, validation, history, audit (rate vs a bare instance + history transaction)', '>= 0.6', floor, app, create(floor, 'floor'), create(app, 'app', session));
  }
  if (runs('logins')) {
    const read = { url: `${app.url}/api/instances/stacks`, headers: session, seconds: SECONDS, expect: 200 };
    const pairs = await alternate(
      ROUNDS,
      () => load('readsDuringLogins', { read }),
      () => load('readsDuringLogins', { read, logins: { url: `${app.url}/api/auth/login`, origin: app.url, users } }),
    );
    const p99 = (side) => median(pairs.map((p) => p[side].p99));
    record('read p99 during 10 parallel logins (vs the same reads alone)', null, median(pairs.map((p) => p.app.p99 / p.floor.p99)),
      `p99 ${p99('app').toFixed(2)} ms during, ${p99('floor').toFixed(2)} ms alone, one reading connection, ${median(pairs.map((p) => p.app.logins))} logins a round`);
  }
  if (runs('import')) {
    const send = (server, headers) => async () => {
      const res = await load('importOnce', { url: `${server.url}/api/import`, headers, count: IMPORTED });
      if (res.status !== 200 || JSON.parse(res.body).imported !== IMPORTED) throw new Error(`import: ${res.status} ${res.body.slice(0, 300)}`);
      return res;
    };
    const pairs = await alternate(Math.min(ROUNDS, 5), send(floor), send(app, session));
    const ms = (side) => median(pairs.map((p) => p[side].ms)).toFixed(0);
    record(`import of ${IMPORTED.toLocaleString('en')} instances (time vs a bare transaction writing them and their history rows)`, '<= 1.2', median(pairs.map((p) => p.app.ms / p.floor.ms)),
      `homefleet ${ms('app')} ms with its pre-import snapshot, floor ${ms('floor')} ms, ${(pairs[0].app.bytes / 1048576).toFixed(1)} MB sent, medians of ${pairs.length} rounds`);
  }
  await Promise.all([stop(app.child), stop(floor.child)]);
  if (runs('start')) await startMeasures(path.join(dir, 'start', 'homefleet.db'));
  return printTable();
}

/**
 * Start to healthy: `node build/start.cjs server` (what `npm start` runs, on the seeded database) from
 * spawn to its first 200 on /api/health. The goal's floor is the command the goal names, `node -e
 * "require('better-sqlite3')"`, from spawn to exit; a stricter floor is printed beside it: that require
 * plus opening the same database and answering the same poll over node:http.
 */
async function startMeasures(dbPath) {
  const serving = `const D=require('better-sqlite3');const db=new D(process.env.DB_PATH);db.exec('PRAGMA journal_mode=WAL');const q=db.prepare('SELECT 1');require('http').createServer((_,r)=>{q.get();r.end('{"status":"ok"}')}).listen(+process.env.PORT,'127.0.0.1')`;
  const toHealthy = (args) => async () => {
    const port = await freePort();
    const since = performance.now();
    const child = start(process.execPath, args, { PORT: String(port), HOST: '127.0.0.1', DB_PATH: dbPath });
    const ms = await untilHealthy(port, child, since);
    await stop(child);
    return { ms };
  };
  const requireOnly = async () => {
    const since = performance.now();
    const child = start(process.execPath, ['-e', "require('better-sqlite3')"], {});
    const code = await new Promise((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`node -e "require('better-sqlite3')" exited with ${code}`);
    return { ms: performance.now() - since };
  };
  const floors = async () => ({ ms: (await requireOnly()).ms, serving: (await toHealthy(['-e', serving])()).ms });
  const pairs = await alternate(ROUNDS, floors, toHealthy([path.join(root, 'build/start.cjs'), 'server']));
  const ms = (pick) => median(pairs.map(pick)).toFixed(0);
  record('start to healthy, node build/start.cjs server (vs node -e "require(\'better-sqlite3\')")', '<= 2.5', median(pairs.map((p) => p.app.ms / p.floor.ms)),
    `homefleet ${ms((p) => p.app.ms)} ms, floor ${ms((p) => p.floor.ms)} ms, on the seeded 10,000-instance database`);
  record('start to healthy (vs that require, opening the database and answering /api/health over node:http)', null, median(pairs.map((p) => p.app.ms / p.floor.serving)),
    `that floor ${ms((p) => p.floor.serving)} ms`);

  // The process `npm start` leaves running, found under npm (npm -> sh -> node), its RSS read 1 s after healthy.
  const rounds = [];
  for (let round = 0; round < 3; round++) {
    const port = await freePort();
    const since = performance.now();
    const npm = start('npm', ['start'], { PORT: String(port), HOST: '127.0.0.1', DB_PATH: dbPath });
    const ms = await untilHealthy(port, npm, since);
    await sleep(1000);
    const server = descendants(npm.pid).find((pid) => readProc(pid, 'cmdline').split('\0')[1]?.endsWith('build/start.cjs'));
    if (!server) throw new Error('npm start: no build/start.cjs process under npm');
    rounds.push({ ms, rss: Number(/VmRSS:\s+(\d+)/.exec(readProc(server, 'status'))[1]) / 1024 });
    await stop(npm);
    // start.cjs notices its parent is gone within half a second and stops the server (see its header).
    for (let i = 0; i < 200 && /State:\s+[^Z]/.test(readProc(server, 'status')); i++) await sleep(50);
    if (/State:\s+[^Z]/.test(readProc(server, 'status'))) throw new Error('npm start: the server outlived npm by 10 s');
  }
  record('idle RSS of the server npm start leaves running, 1 s after healthy', '<= 60', median(rounds.map((r) => r.rss)),
    `median of ${rounds.length} starts; npm start took ${median(rounds.map((r) => r.ms)).toFixed(0)} ms to healthy, npm's own start-up included`, ' MB');
}

function readProc(pid, file) {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

function descendants(pid) {
  const children = readProc(pid, `task/${pid}/children`).split(/\s+/).filter(Boolean).map(Number);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

function printTable() {
  const rows = [['measure', 'goal', 'measured', 'met'], ...results.map((r) => [r.name, r.goal, r.measured, r.met === null ? '(measure)' : r.met ? 'yes' : 'NO'])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  console.log(`\n${line(rows[0])}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${rows.slice(1).map(line).join('\n')}\n`);
  const missed = results.filter((r) => r.met === false);
  console.log(missed.length ? `${missed.length} goal(s) not met` : 'every goal met');
  return missed.length ? 1 : 0;
}

main().then(
  (code) => {
    loader.disconnect();
    process.exitCode = code;
  },
  (err) => {
    console.error(err);
    for (const child of spawned) {
      if (!child.stopping && (child.exitCode !== null || child.signalCode !== null)) console.error(`${child.spawnargs.join(' ')} exited by itself: ${child.exitCode ?? child.signalCode}`);
    }
    console.error(`the servers' last log lines:\n${fs.readFileSync(logFile, 'utf8').split('\n').slice(-15).join('\n')}`);
    process.exit(2);
  },
);
