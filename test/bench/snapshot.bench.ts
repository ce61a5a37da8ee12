// Snapshot benchmark: a scheduled snapshot of a 100,000-instance database while the server answers
// reads. Prints the longest read latency during the snapshot against the same number of reads
// without one (target: ratio < 3). Never fails on a number, only on errors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { openDatabase } from '../../server/db/database.js';
import { TestClient } from '../helpers/http.js';
import { serveApp } from './harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-snapshot-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const PASSWORD = 'bench-password-1234';
const COUNT = 100_000;

describe('snapshot benchmark', () => {
  it('keeps reads fast while a scheduled snapshot of 100,000 instances is taken', async () => {
    const dbPath = path.join(dir, 'snapshot.db');
    const seed = openDatabase(dbPath);
    seed.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${COUNT})
      INSERT INTO instances (vmid, name, state, stack, tailscale_ip, atlas, argus, created_at, updated_at)
        SELECT i, 'vm-' || i, 'deployed', 'development', '100.64.' || (i / 256 % 256) || '.' || (i % 256), 1, 0, '2026-11-22T10:00:00Z', '2026-11-22T10:00:00Z' FROM n;
      INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by)
        SELECT id, 'state', 'testing', 'deployed', '2026-11-22T10:00:00.000Z', 'bench' FROM instances;
    `);
    seed.close();

    // Scheduled snapshots on, the schedule itself far away: the benchmark starts the scheduled kind itself.
    const app = createApp({ dbPath, config: { authAllowHttp: true, snapshotIntervalHours: 24 }, snapshots: { firstDelayMs: 3_600_000 } });
    await app.accounts.create({ username: 'bench', display_name: 'Bench', role: 'administrator', password: PASSWORD });
    const server = await serveApp(app.app);
    const client = new TestClient(server.url);
    expect((await client.post('/api/auth/login', { username: 'bench', password: PASSWORD })).status).toBe(200);
    const headers = { cookie: client.cookieHeader() };

    let serial = 0;
    /** One read at a time; returns each read's latency in ms. */
    async function reads(until: () => boolean, min: number): Promise<number[]> {
      const times: number[] = [];
      while (!until() || times.length < min) {
        const vmid = 1 + ((serial++ * 7919) % COUNT);
        const started = process.hrtime.bigint();
        const res = await fetch(`${server.url}/api/instances/${vmid}`, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`read ${vmid}: ${res.status}`);
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      return times;
    }
    await reads(() => true, 2_000); // warm-up

    const p99 = (times: number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length * 0.99)]!;
    const rounds: Array<{ snapshotMs: number; during: number; without: number; count: number; p99During: number; p99Without: number }> = [];
    // Alternating rounds, best of each: a shared machine's scheduling noise is larger than the effect.
    const ROUNDS = 5;
    for (let round = 0; round < ROUNDS; round++) {
      let done = false;
      const started = performance.now();
      const taking = app.snapshots.take('scheduled').finally(() => (done = true));
      const during = await reads(() => done, 1);
      const info = await taking;
      const snapshotMs = performance.now() - started;
      expect(info.kind).toBe('scheduled');
      const without = await reads(() => true, during.length);
      rounds.push({ snapshotMs, during: Math.max(...during), without: Math.max(...without), count: during.length, p99During: p99(during), p99Without: p99(without) });
    }
    const best = { during: Math.min(...rounds.map((r) => r.during)), without: Math.min(...rounds.map((r) => r.without)) };
    const bestP99 = { during: Math.min(...rounds.map((r) => r.p99During)), without: Math.min(...rounds.map((r) => r.p99Without)) };
    const size = fs.statSync(path.join(path.dirname(dbPath), 'snapshots', app.snapshots.list()[0]!.name)).size;
    const lines = [
      `snapshot of ${COUNT.toLocaleString('en')} instances (${(size / 1048576).toFixed(1)} MiB) while reading one instance at a time:`,
      ...rounds.map(
        (r, i) =>
          `  round ${i + 1}: snapshot ${r.snapshotMs.toFixed(0)} ms, ${r.count} reads; longest read during ${r.during.toFixed(2)} ms, without ${r.without.toFixed(2)} ms; p99 ${r.p99During.toFixed(2)} / ${r.p99Without.toFixed(2)} ms`,
      ),
      `  longest read (best of ${ROUNDS}): during ${best.during.toFixed(2)} ms, without ${best.without.toFixed(2)} ms, ratio ${(best.during / best.without).toFixed(2)} (target < 3)`,
      `  p99 read (best of ${ROUNDS}): during ${bestP99.during.toFixed(2)} ms, without ${bestP99.without.toFixed(2)} ms, ratio ${(bestP99.during / bestP99.without).toFixed(2)}`,
    ];
    console.log(`\n${lines.join('\n')}\n`);
    await server.close();
    await app.close();
  });
});
