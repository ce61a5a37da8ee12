// Command delivery (PRODUCT.md "Guest control through agents": "a command reaches an online agent
// within 2 s"): 200 agents long-polling GET /api/agent/commands against the built server in its own
// process, 100 guest actions queued at random moments by an operator's API calls. Prints the delivery
// latency (request sent → command in the agent's hands) and the server's RSS against its idle
// baseline in the same run. Run with
// `npx vitest run --config test/bench/vitest.config.ts test/bench/commands.bench.ts`.
// All traffic goes to the server this file starts on 127.0.0.1; every loop is bounded.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from '../helpers/built-server.js';

const AGENTS = 200;
const ACTIONS = 100;
const SPREAD_MS = 10_000;
const SETUP_TOKEN = 'bench-commands-setup-token-0123456789';
const PASSWORD = 'bench-commands-password';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-cmd-'));
let server: BuiltServer | undefined;
afterAll(async () => {
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One GET on the agent's own keep-alive socket: status and parsed body. */
function get(url: URL, token: string, agent: http.Agent): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
  });
}

describe('command delivery benchmark', () => {
  it(`${AGENTS} long-polling agents, ${ACTIONS} actions: delivery p99 ≤ 2 s, RSS rise ≤ 30 MB`, async () => {
    server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN));
    const pid = server.child.pid!;
    const admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
    const enrollment = (await admin.post('/api/hosts/enrollment-tokens', { max_uses: AGENTS })).body.token as string;
    const hosts: { id: number; token: string }[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const res = await admin.post('/api/agent/enroll', { hostname: `pve${i}`, machine_id: `bench-${i}`, agent_version: '1.0.0' }, { authorization: `Bearer ${enrollment}` });
      expect(res.status).toBe(201);
      const beat = await admin.post(
        '/api/agent/heartbeat',
        {
          agent_version: '1.0.0',
          started_at: '2026-11-22T09:00:00Z',
          hostname: `pve${i}`,
          addresses: [],
          uptime_s: 1,
          hypervisor_version: '8.2.4',
          guests: [100, 101, 102].map((vmid) => ({ vmid, name: `g${vmid}`, type: 'qemu', status: 'running' })),
        },
        { authorization: `Bearer ${res.body.host_token}` },
      );
      expect(beat.status).toBe(200);
      hosts.push({ id: res.body.host_id, token: res.body.host_token });
    }

    // Idle baseline: everything enrolled, nothing polling.
    await sleep(1000);
    const idleSamples: number[] = [];
    for (let i = 0; i < 5; i++) (idleSamples.push(rssMb(pid)), await sleep(200));
    const idle = Math.max(...idleSamples);

    // The agents: each long-polls on its own socket, answers every command at once, and polls again.
    const received = new Map<string, number>();
    let running = true;
    const agents = hosts.map((host) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const url = new URL('/api/agent/commands?wait=25', server!.url);
      const loop = (async () => {
        while (running) {
          const res = await get(url, host.token, agent).catch(() => undefined);
          if (!res) break;
          for (const command of res.body?.commands ?? []) {
            received.set(command.operation_id, performance.now());
            await admin.post(`/api/agent/operations/${command.operation_id}/result`, { exit_code: 0, output: 'ok' }, { authorization: `Bearer ${host.token}` });
          }
        }
      })();
      return { agent, loop };
    });
    await sleep(1000);

    // The actions, at random moments over SPREAD_MS, each to a random host's random guest.
    const requested = new Map<string, number>();
    let peak = rssMb(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
    const start = performance.now();
    const moments = Array.from({ length: ACTIONS }, () => Math.random() * SPREAD_MS).sort((a, b) => a - b);
    await Promise.all(
      moments.map(async (at, i) => {
        await sleep(at);
        const host = hosts[Math.floor(Math.random() * AGENTS)]!;
        const sent = performance.now();
        const res = await admin.post(`/api/hosts/${host.id}/guests/${100 + (i % 3)}/actions`, { action: 'start' });
        // Two actions drawn for one guest while the first is open: the second is refused, as it should be.
        if (res.status === 202) requested.set(res.body.operation_id, sent);
        else expect(res.body).toEqual({ error: 'an operation is already pending for this guest' });
      }),
    );
    const deadline = performance.now() + 10_000;
    while ([...requested.keys()].some((id) => !received.has(id)) && performance.now() < deadline) await sleep(50);
    clearInterval(sampler);
    peak = Math.max(peak, rssMb(pid));
    running = false;
    for (const { agent } of agents) agent.destroy();

    const latencies = [...requested].map(([id, sent]) => (received.get(id) ?? Infinity) - sent).sort((a, b) => a - b);
    const missing = latencies.filter((l) => l === Infinity).length;
    const p50 = quantile(latencies, 0.5);
    const p99 = quantile(latencies, 0.99);
    console.log(
      [
        `command delivery: ${AGENTS} agents long-polling, ${requested.size} actions accepted over ${((performance.now() - start) / 1000).toFixed(1)} s`,
        `  delivery p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms (target p99 ≤ 2000 ms)`,
        `  server RSS: idle ${idle.toFixed(1)} MB, peak under load ${peak.toFixed(1)} MB, rise ${(peak - idle).toFixed(1)} MB (target ≤ 30 MB)`,
      ].join('\n'),
    );
    expect(missing).toBe(0);
    expect(requested.size).toBeGreaterThan(ACTIONS * 0.8);
    expect(p99).toBeLessThanOrEqual(2000);
    expect(peak - idle).toBeLessThanOrEqual(30);
  });
});
