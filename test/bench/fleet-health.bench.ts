// GET /api/fleet-health at the scale issue 39 sets: 2,500 instances on 50 hosts, 10 backups each, every
// check of a policy asked of every instance. Target: p99 at most 100 ms.
//   npx vitest run --config test/bench/vitest.config.ts test/bench/fleet-health.bench.ts
// The BUILT server (dist/server/main.js) in its own process on a temp-file database, fed through its
// own API (instances, enrolled hosts' heartbeats and backup reports, the policy); the requests come
// from another process (test/bench/metrics-load.mjs, one GET after another on a keep-alive socket), so
// no client shares the server's event loop. All traffic goes to 127.0.0.1; every loop is bounded.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { setUpAdmin } from '../helpers/headless.js';
import { TestClient } from '../helpers/http.js';
import { freePort } from '../helpers/until.js';

const HOSTS = 50;
const PER_HOST = 50;
const BACKUPS = 10;
const REQUESTS = 400;
const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-fleet-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

function loader() {
  const child = fork(path.join(root, 'test/bench/metrics-load.mjs'), { stdio: 'inherit' });
  children.push(child);
  return (command: string, args: Record<string, unknown>) =>
    new Promise<any>((resolve, reject) => {
      child.once('message', (m: { result?: unknown; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.result)));
      child.send({ id: 1, command, args });
    });
}

describe('fleet-health benchmark', () => {
  it(`${HOSTS * PER_HOST} instances on ${HOSTS} hosts with ${BACKUPS} backups each: GET /api/fleet-health p99 ≤ 100 ms`, { timeout: 600_000 }, async () => {
    await ensureBuilt();
    const port = await freePort();
    const setupToken = 'fleet-bench-setup-token-0123456789abcdef';
    const child = spawn(process.execPath, ['dist/server/main.js'], {
      cwd: root,
      env: {
        PATH: process.env.PATH!, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DB_PATH: path.join(dir, 'fleet.db'),
        FLEET_SETUP_TOKEN: setupToken, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true', FLEET_HEARTBEAT_INTERVAL_S: '3600',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.push(child);
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/api/health`)).ok) break;
      } catch {}
      if (i > 100) throw new Error('the server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const admin = new TestClient(url);
    const [name, value] = (await setUpAdmin(url, setupToken)).split('=');
    admin.setCookie(name!, value!);
    const token = (await admin.post('/api/tokens', { name: 'bench reader', role: 'viewer' })).body.token as string;

    const started = performance.now();
    const enrollment = (await admin.post('/api/hosts/enrollment-tokens', { max_uses: HOSTS })).body.token as string;
    const now = Math.floor(Date.now() / 1000);
    for (let h = 0; h < HOSTS; h++) {
      const enrolled = await admin.post('/api/agent/enroll', { hostname: `pve${h}`, machine_id: `fleet-bench-${h}`, agent_version: '1.0.0' }, { authorization: `Bearer ${enrollment}` });
      expect(enrolled.status).toBe(201);
      const agent = new TestClient(url, { authorization: `Bearer ${enrolled.body.host_token}` });
      const vmids = Array.from({ length: PER_HOST }, (_, g) => 1000 + h * PER_HOST + g);
      for (const vmid of vmids) expect((await admin.post('/api/instances', { vmid, name: `guest-${vmid}`, state: 'deployed', stack: 'production' })).status).toBe(201);
      const beat = await agent.post('/api/agent/heartbeat', {
        agent_version: '1.0.0', started_at: '2026-11-22T09:00:00Z', hostname: `pve${h}`, addresses: ['192.0.2.10'], uptime_s: 3600, hypervisor_version: 'pve-manager/8.2.4',
        guests: vmids.map((vmid, g) => ({ vmid, name: `guest-${vmid}`, type: g % 2 ? 'lxc' : 'qemu', status: g % 7 ? 'running' : 'stopped' })),
      });
      expect(beat.status).toBe(200);
      const report = await agent.post('/api/agent/backups', {
        jobs: [
          { id: 'backup-nightly', enabled: true, schedule: '02:00', vmids: 'all', exclude: [vmids[3]], storage: 'pbs' },
          { id: 'backup-old', enabled: false, schedule: 'sun 01:00', vmids: [vmids[3]], exclude: [], storage: 'pbs' },
        ],
        backups: vmids.flatMap((vmid) =>
          Array.from({ length: BACKUPS }, (_, b) => ({ vmid, volid: `pbs:backup/vm/${vmid}/n${b}`, ctime: now - (b + (vmid % 3) * 20) * 3600, size: 1e9, storage: 'pbs', protected: false, verified: b === 0 && vmid % 11 === 0 ? 'failed' : 'ok' })),
        ),
      });
      expect(report.status).toBe(204);
    }
    const everything = { running: true, on_tailnet: true, patched: true, in_automation: true, in_backup_job: true, backed_up_within_h: 26, agent_current: true };
    expect((await admin.put('/api/policies', [{ scope: { stack: 'production' }, checks: everything }])).status).toBe(200);
    const seeded = (performance.now() - started) / 1000;

    const check = (await new TestClient(url, { authorization: `Bearer ${token}` }).get('/api/fleet-health')).body;
    expect(check.instances).toHaveLength(HOSTS * PER_HOST);
    const load = loader();
    await load('queries', { url: `${url}/api/fleet-health`, headers: { authorization: `Bearer ${token}` }, count: 20 });
    const result = await load('queries', { url: `${url}/api/fleet-health`, headers: { authorization: `Bearer ${token}` }, count: REQUESTS });
    const failing = await load('queries', { url: `${url}/api/fleet-health?failing=true`, headers: { authorization: `Bearer ${token}` }, count: 100 });
    console.log(
      [
        '',
        'fleet-health bench',
        `  seeded ${HOSTS * PER_HOST} instances, ${HOSTS} hosts, ${HOSTS * PER_HOST * BACKUPS} backups in ${seeded.toFixed(1)} s`,
        `  GET /api/fleet-health (${REQUESTS} one after another): p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms (target ≤ 100 ms)`,
        `  GET /api/fleet-health?failing=true (100): p50 ${failing.p50.toFixed(1)} ms, p99 ${failing.p99.toFixed(1)} ms`,
      ].join('\n'),
    );
    expect(result.p99).toBeLessThanOrEqual(100);
  });
});
