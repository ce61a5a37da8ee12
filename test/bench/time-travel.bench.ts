// Time travel at the scale issue 39 sets: GET /api/instances?at= over 10,000 instances with 100,000
// history rows, against the plain GET /api/instances in the same run. Target: at most 3x its time.
//   node build/build.mjs && npx vitest run --config test/bench/vitest.config.ts test/bench/time-travel.bench.ts
// The registry is written through the instance service (a hand-moved clock spreads it over 100 days):
// 10,500 instances created, 89,500 field changes, 500 of them deleted (their past is rebuilt too).
// The BUILT server (dist/server/main.js) serves it in its own process; the load client
// (time-travel-load.mjs) is another process, sending the plain list and the list at three instants
// (early, middle and late in the history) in turn, one request at a time. All traffic goes to the
// 127.0.0.1 server this file starts; every loop is bounded.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { ensureBuilt } from '../helpers/build.js';
import { manualClock } from '../helpers/clock.js';
import { setUpAdmin } from '../helpers/headless.js';
import { freePort } from '../helpers/until.js';

const INSTANCES = 10_000;
const DELETED = 500;
const CHANGES = 100_000 - INSTANCES - DELETED;
const ROUNDS = 30;
const START = Date.parse('2026-01-01T00:00:00.000Z');
const SPAN = 100 * 86_400_000;
const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-time-travel-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

const STATES = ['deployed', 'testing', 'degraded'] as const;
const FLAGS = ['atlas', 'argus', 'semaphore', 'patchmon', 'tailscale', 'andromeda', 'hardware_acceleration'] as const;

/** The registry, written as an operator and the sync jobs would: creations first, then changes to random instances and fields. */
async function seed(file: string): Promise<{ history: number }> {
  const clock = manualClock(START);
  const app = createApp({ dbPath: file, clock, config: { logLevel: 'silent', snapshotIntervalHours: 0 } });
  const { instances } = app;
  const total = INSTANCES + DELETED;
  let random = 42;
  const next = (n: number) => ((random = (random * 1103515245 + 12345) % 2 ** 31), random % n);
  const state = new Map<number, { name: string; state: number; flags: number[] }>();
  const batch = app.context.transaction((work: () => void) => work());
  for (let from = 0; from < total; from += 1000) {
    batch(() => {
      for (let i = from; i < Math.min(total, from + 1000); i++) {
        clock.set(START + Math.floor((i / total) * SPAN * 0.3));
        instances.create({ vmid: 100 + i, name: `guest-${i}`, state: 'deployed', stack: i % 3 ? 'development' : 'production', tailscale_ip: '' });
        state.set(100 + i, { name: `guest-${i}`, state: 0, flags: FLAGS.map(() => 0) });
      }
    });
  }
  for (let from = 0; from < CHANGES; from += 1000) {
    batch(() => {
      for (let k = from; k < Math.min(CHANGES, from + 1000); k++) {
        clock.set(START + SPAN * 0.3 + Math.floor((k / CHANGES) * SPAN * 0.69));
        const vmid = 100 + next(total);
        const was = state.get(vmid)!;
        const kind = next(10);
        if (kind < 3) instances.update(vmid, { name: (was.name = `guest-${vmid}-${k}`) });
        else if (kind < 5) instances.update(vmid, { state: STATES[(was.state = (was.state + 1) % 3)] });
        else if (kind < 6) instances.update(vmid, { tailscale_ip: `100.64.${k % 250}.${(k >> 8) % 250}` });
        else {
          const f = next(FLAGS.length);
          instances.update(vmid, { [FLAGS[f]!]: (was.flags[f] = 1 - was.flags[f]!) });
        }
      }
    });
  }
  clock.set(START + SPAN);
  // The last 500 vmids go: development instances only (production ones cannot be deleted).
  batch(() => {
    for (let i = total - 1, gone = 0; gone < DELETED; i--) {
      if ((i % 3) === 0) continue;
      instances.remove(100 + i);
      gone++;
    }
  });
  const history = (app.db.prepare('SELECT (SELECT count(*) FROM instance_history) + (SELECT count(*) FROM deleted_instance_history)').pluck().get() as number);
  app.context.commits.flush();
  await app.close();
  return { history };
}

async function startBuilt(file: string, setupToken: string): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, ['dist/server/main.js'], {
    cwd: root,
    env: { PATH: process.env.PATH!, PORT: String(port), HOST: '127.0.0.1', DB_PATH: file, LOG_LEVEL: 'warn', FLEET_SETUP_TOKEN: setupToken, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_SNAPSHOT_INTERVAL_HOURS: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) return url;
    } catch {
      // not up yet
    }
    if (i > 150 || child.exitCode !== null) throw new Error('the built server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function loader() {
  const child = fork(path.join(root, 'test/bench/time-travel-load.mjs'), { stdio: 'inherit' });
  children.push(child);
  return (args: Record<string, unknown>) =>
    new Promise<{ latencies: number[][]; counts: number[] }>((resolve, reject) => {
      child.once('message', (m: { result?: { latencies: number[][]; counts: number[] }; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.result!)));
      child.send({ id: 1, args });
    });
}

const median = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)]!;
const p90 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)]!;

describe('time travel benchmark', () => {
  it(`GET /api/instances?at= over ${INSTANCES} instances and 100,000 history rows, against the plain list`, { timeout: 900_000 }, async () => {
    await ensureBuilt();
    const file = path.join(dir, 'registry.db');
    const seeded = performance.now();
    const { history } = await seed(file);
    const seedSeconds = (performance.now() - seeded) / 1000;
    const setupToken = `time-travel-bench-${process.pid}`;
    const url = await startBuilt(file, setupToken);
    const cookie = await setUpAdmin(url, setupToken);
    const iso = (fraction: number) => new Date(START + SPAN * fraction).toISOString();
    const paths = ['/api/instances', `/api/instances?at=${iso(0.35)}`, `/api/instances?at=${iso(0.65)}`, `/api/instances?at=${iso(0.95)}`];
    const labels = ['plain list (now)', 'at: early (35%)', 'at: middle (65%)', 'at: late (95%)'];
    const measure = loader();
    await measure({ base: url, paths, cookie, rounds: 3 }); // warm-up: statements prepared, pages cached
    const { latencies, counts } = await measure({ base: url, paths, cookie, rounds: ROUNDS });
    const plain = median(latencies[0]!);
    const lines = ['', `time travel bench: ${counts[0]} instances now, ${history} history rows (seeded in ${seedSeconds.toFixed(1)} s), ${ROUNDS} rounds`];
    const ratios: number[] = [];
    for (const [i, label] of labels.entries()) {
      const ratio = median(latencies[i]!) / plain;
      if (i > 0) ratios.push(ratio);
      lines.push(`  ${label.padEnd(20)} ${String(counts[i]).padStart(6)} rows  median ${median(latencies[i]!).toFixed(1)} ms  p90 ${p90(latencies[i]!).toFixed(1)} ms${i ? `  ${ratio.toFixed(2)}x the plain list (target <= 3x)` : ''}`);
    }
    console.log(lines.join('\n'));
    expect(history).toBeGreaterThanOrEqual(100_000);
    expect(counts[0]).toBe(INSTANCES);
    expect(Math.max(...ratios)).toBeLessThanOrEqual(3);
  });
});
