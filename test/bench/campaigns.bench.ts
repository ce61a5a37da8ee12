// A campaign at fleet scale (issue 38): 500 guests across 50 hosts, rebooted in waves of 50, against
// the built server in its own process. The hosts' agents long-poll from a separate process
// (campaign-agents.mjs: a lean client with a fake hypervisor answering each command within 20–120 ms).
// Prints how soon each wave's commands reached the agents after the wave started (the targets'
// `started_at`), the server's RSS rise over its idle baseline in the same run, and how fast
// GET /api/campaigns/:id serves the campaign's JSON for 500 targets. Run with
// `npx vitest run --config test/bench/vitest.config.ts test/bench/campaigns.bench.ts`.
// All traffic goes to the server this file starts on 127.0.0.1; every loop is bounded.
//
// Measured on the 2-core shared machine, 28 November 2026, load average 4–8, alternating runs
// (3 before, 4 after; medians): delivery p99 205 → 216 ms (met either way); RSS rise 50.0 MB
// (48.0–52.8) → 35.1 MB (27.6–35.2), met: a young-generation collection after every 16 changes of
// operations (server/operations/parts.ts); GET /api/campaigns/:id p99 21.9 → 19.0 ms from the client
// (one run in each set 46–63), in the server p50 1.3 → 0.5 ms, CPU per read 1.87 → 1.07 ms: the
// campaign's JSON is kept encoded until it changes (server/campaigns/service.ts). What is left of
// the p99 is waiting for a core (in-server p99 11–25 ms against 0.5 ms of CPU), not work.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from '../helpers/built-server.js';

const HOSTS = 50;
const GUESTS = 10;
const WAVE = 50;
const READS = 300;
const SETUP_TOKEN = 'bench-campaigns-setup-token-0123456789';
const PASSWORD = 'bench-campaigns-password';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-campaigns-'));
let server: BuiltServer | undefined;
let agents: ReturnType<typeof execa> | undefined;
afterAll(async () => {
  agents?.kill('SIGTERM');
  await agents?.catch(() => undefined);
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
/** CPU time the process has used (user + system), from /proc: clock ticks of 10 ms. */
const cpuMs = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const vmidOf = (host: number, guest: number) => 10_000 + host * GUESTS + guest;

describe('campaign benchmark', () => {
  it(`${HOSTS * GUESTS} targets on ${HOSTS} hosts in waves of ${WAVE}: delivery p99 ≤ 2 s after each wave starts, RSS rise ≤ 40 MB, the campaign's JSON p99 ≤ 50 ms`, async () => {
    // Online for three intervals after the one heartbeat each host sends here: longer than the run.
    server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN, { FLEET_HEARTBEAT_INTERVAL_S: '120' }));
    const pid = server.child.pid!;
    const admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
    const enrollment = (await admin.post('/api/hosts/enrollment-tokens', { max_uses: HOSTS })).body.token as string;
    const tokens: string[] = [];
    for (let h = 0; h < HOSTS; h++) {
      const res = await admin.post('/api/agent/enroll', { hostname: `pve${h}`, machine_id: `bench-campaign-${h}`, agent_version: '1.0.0' }, { authorization: `Bearer ${enrollment}` });
      expect(res.status).toBe(201);
      const guests = Array.from({ length: GUESTS }, (_, g) => ({ vmid: vmidOf(h, g), name: `g${vmidOf(h, g)}`, type: 'qemu', status: 'running' }));
      const beat = await admin.post(
        '/api/agent/heartbeat',
        { agent_version: '1.0.0', started_at: '2026-11-22T09:00:00Z', hostname: `pve${h}`, addresses: [], uptime_s: 1, hypervisor_version: '8.2.4', guests },
        { authorization: `Bearer ${res.body.host_token}` },
      );
      expect(beat.status).toBe(200);
      tokens.push(res.body.host_token);
    }
    const tokensFile = path.join(dir, 'tokens.json');
    fs.writeFileSync(tokensFile, JSON.stringify(tokens));

    // Idle baseline: every host enrolled, nothing polling.
    await sleep(1000);
    const idleSamples: number[] = [];
    for (let i = 0; i < 5; i++) (idleSamples.push(rssMb(pid)), await sleep(200));
    const idle = Math.max(...idleSamples);

    const received = new Map<string, number>();
    agents = execa(process.execPath, [path.join(import.meta.dirname, 'campaign-agents.mjs'), server.url, tokensFile], { reject: false, buffer: false });
    let rest = '';
    agents.stdout!.setEncoding('utf8');
    agents.stdout!.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (line) (({ operation_id, at }) => received.set(operation_id, at))(JSON.parse(line) as { operation_id: string; at: number });
    });
    await sleep(1500);

    // One wave takes the same guest index on every host: each agent gets one command a wave.
    const vmids = Array.from({ length: GUESTS }, (_, g) => Array.from({ length: HOSTS }, (_, h) => vmidOf(h, g))).flat();
    let peak = rssMb(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
    const started = performance.now();
    const made = await admin.post('/api/campaigns', { name: 'reboot the fleet', target: { vmids }, step: { type: 'guest.action', action: 'reboot' }, wave_size: WAVE, respect_maintenance: false });
    expect(made.status, made.text).toBe(201);
    const id = made.body.id as number;
    const deadline = Date.now() + 120_000;
    let campaign = made.body;
    while (campaign.status === 'running' && Date.now() < deadline) {
      await sleep(250);
      campaign = (await admin.get(`/api/campaigns/${id}`)).body;
    }
    const took = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, rssMb(pid));
    expect(campaign.status).toBe('succeeded');

    // Delivery: each command's arrival at its agent after its wave started (the targets' started_at).
    const latencies = (campaign.targets as { operation_id: string; started_at: string }[]).map((t) => (received.get(t.operation_id) ?? Infinity) - Date.parse(t.started_at)).sort((a, b) => a - b);
    const waveLatency = Array.from({ length: GUESTS }, (_, w) => {
      const wave = (campaign.targets as { wave: number; operation_id: string; started_at: string }[]).filter((t) => t.wave === w + 1);
      return Math.max(...wave.map((t) => received.get(t.operation_id)! - Date.parse(t.started_at)));
    });

    // The campaign page's JSON for 500 targets, read one after another.
    const reads: number[] = [];
    const cpuBefore = cpuMs(pid);
    for (let i = 0; i < READS; i++) {
      const t0 = performance.now();
      const res = await admin.get(`/api/campaigns/${id}`);
      reads.push(performance.now() - t0);
      expect(res.body.targets.length).toBe(HOSTS * GUESTS);
    }
    const cpuPerRead = (cpuMs(pid) - cpuBefore) / READS;
    reads.sort((a, b) => a - b);
    const bytes = Buffer.byteLength(JSON.stringify(campaign));

    console.log(
      [
        `campaign: ${HOSTS * GUESTS} targets on ${HOSTS} hosts, ${GUESTS} waves of ${WAVE}, done in ${took.toFixed(1)} s`,
        `  delivery after the wave started: p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p99 ${quantile(latencies, 0.99).toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms (target p99 ≤ 2000 ms)`,
        `  slowest command of each wave: ${waveLatency.map((l) => `${l} ms`).join(', ')}`,
        `  server RSS: idle ${idle.toFixed(1)} MB, peak ${peak.toFixed(1)} MB, rise ${(peak - idle).toFixed(1)} MB (target ≤ 40 MB)`,
        `  GET /api/campaigns/:id (${(bytes / 1024).toFixed(0)} KiB): p50 ${quantile(reads, 0.5).toFixed(1)} ms, p99 ${quantile(reads, 0.99).toFixed(1)} ms (target p99 ≤ 50 ms); the server's CPU per read ${cpuPerRead.toFixed(2)} ms, load average ${os.loadavg()[0]!.toFixed(1)}`,
      ].join('\n'),
    );
    // The same reads as the server's request log timed them (without the client's parsing).
    const stopped = await server.stop();
    server = undefined;
    const inServer = stopped.all!.split('\n').filter((l) => l.includes(`"path":"/api/campaigns/${id}"`)).map((l) => JSON.parse(l).ms as number).sort((a, b) => a - b);
    console.log(`  GET /api/campaigns/:id in the server: p50 ${quantile(inServer, 0.5)} ms, p99 ${quantile(inServer, 0.99)} ms`);
    expect(latencies.filter((l) => l === Infinity)).toEqual([]);
    expect(quantile(latencies, 0.99)).toBeLessThanOrEqual(2000);
    expect(peak - idle).toBeLessThanOrEqual(40);
    expect(quantile(reads, 0.99)).toBeLessThanOrEqual(50);
  });
});
