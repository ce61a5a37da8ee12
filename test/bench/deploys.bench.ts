// Deploy delivery (PRODUCT.md "Deploy, rebuild and server keys", issue 36): 10 hosts, each enrolled
// and heart-beating with a qemu template 9000, their agents long-polling GET /api/agent/commands
// against the built server in its own process, while an operator's API token queues 50 deploys at
// random moments across them, each with two saved server keys and a cloud config, so every command
// is read from the database when it is handed out and carries real key lines and a config body.
// Each agent posts a result (exit 0) for what it got. Prints the delivery latency (request sent →
// command in the agent's hands) and the server's RSS against its idle baseline in the same run. Run with
// `npx vitest run --config test/bench/vitest.config.ts test/bench/deploys.bench.ts`.
// All traffic goes to the server this file starts on 127.0.0.1; every loop is bounded.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from '../helpers/built-server.js';
import { TestClient } from '../helpers/http.js';
import { ed25519Line } from '../helpers/ssh-keys.js';

const HOSTS = 10;
const DEPLOYS = 50;
const SPREAD_MS = 10_000;
const SETUP_TOKEN = 'bench-deploys-setup-token-0123456789';
const PASSWORD = 'bench-deploys-password';
const CLOUD_CONFIG = '#cloud-config\npackage_update: true\npackages: [nginx, qemu-guest-agent]\nruncmd:\n  - systemctl enable --now qemu-guest-agent\n';
const TEMPLATE = { vmid: 9000, name: 'debian-12-cloud', type: 'qemu', status: 'stopped', template: true };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-deploy-'));
let server: BuiltServer | undefined;
afterAll(async () => {
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** One GET on the agent's own keep-alive socket: status and parsed body. */
function get(url: URL, token: string, agent: http.Agent): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: bearer(token) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
  });
}

describe('deploy delivery benchmark', () => {
  it(`${HOSTS} long-polling agents, ${DEPLOYS} deploys with keys and a cloud config: delivery p99 ≤ 2 s, RSS rise ≤ 30 MB`, async () => {
    server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN));
    const pid = server.child.pid!;
    const admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
    const tokenRes = await admin.post('/api/tokens', { name: 'deploy bench', role: 'operator' });
    expect(tokenRes.status, tokenRes.text).toBe(201);
    const operator = new TestClient(server.url, bearer(tokenRes.body.token));

    const keyLines = [ed25519Line('alice@laptop'), ed25519Line('bob@laptop')];
    const keyIds: number[] = [];
    for (const [i, line] of keyLines.entries()) {
      const res = await admin.post('/api/server-keys', { name: `bench-key-${i}`, public_key: line });
      expect(res.status, res.text).toBe(201);
      keyIds.push(res.body.id);
    }
    const config = await admin.post('/api/cloud-configs', { name: 'bench-web', body: CLOUD_CONFIG });
    expect(config.status, config.text).toBe(201);

    const enrollment = (await admin.post('/api/hosts/enrollment-tokens', { max_uses: HOSTS })).body.token as string;
    const hosts: { id: number; token: string; hostname: string }[] = [];
    const beat = (host: (typeof hosts)[number]) =>
      admin.post(
        '/api/agent/heartbeat',
        { agent_version: '1.0.0', started_at: '2026-11-22T09:00:00Z', hostname: host.hostname, addresses: [], uptime_s: 1, hypervisor_version: '8.2.4', guests: [TEMPLATE] },
        bearer(host.token),
      );
    for (let i = 0; i < HOSTS; i++) {
      const res = await admin.post('/api/agent/enroll', { hostname: `pve${i}`, machine_id: `bench-deploy-${i}`, agent_version: '1.0.0' }, bearer(enrollment));
      expect(res.status, res.text).toBe(201);
      const host = { id: res.body.host_id as number, token: res.body.host_token as string, hostname: `pve${i}` };
      expect((await beat(host)).status).toBe(200);
      hosts.push(host);
    }

    // Idle baseline: everything enrolled and saved, nothing polling.
    await sleep(1000);
    const idleSamples: number[] = [];
    for (let i = 0; i < 5; i++) (idleSamples.push(rssMb(pid)), await sleep(200));
    const idle = Math.max(...idleSamples);

    // The agents: each long-polls on its own socket, answers every command at once, polls again,
    // and beats every 10 s (as a real agent does, every interval) so its host stays online.
    const received = new Map<string, number>();
    const wrong: string[] = [];
    let running = true;
    const agents = hosts.map((host) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const url = new URL('/api/agent/commands?wait=25', server!.url);
      const beats = setInterval(() => void beat(host), 10_000);
      const loop = (async () => {
        while (running) {
          const res = await get(url, host.token, agent).catch(() => undefined);
          if (!res) break;
          for (const command of res.body?.commands ?? []) {
            received.set(command.operation_id, performance.now());
            if (command.type !== 'deploy' || JSON.stringify(command.ssh_keys) !== JSON.stringify(keyLines) || command.cloud_config !== CLOUD_CONFIG) {
              wrong.push(JSON.stringify(command));
            }
            const posted = await admin.post(`/api/agent/operations/${command.operation_id}/result`, { exit_code: 0, output: `homefleet-agent: guest ${command.new_vmid} deployed\n` }, bearer(host.token));
            if (posted.status !== 204) wrong.push(`result ${command.operation_id}: ${posted.status} ${posted.text}`);
          }
        }
      })();
      return { agent, beats, loop };
    });
    await sleep(1000);

    // The deploys, at random moments over SPREAD_MS, each to a random host, each onto its own new vmid.
    const requested = new Map<string, number>();
    let peak = rssMb(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
    const start = performance.now();
    const moments = Array.from({ length: DEPLOYS }, () => Math.random() * SPREAD_MS).sort((a, b) => a - b);
    await Promise.all(
      moments.map(async (at, i) => {
        await sleep(at);
        const host = hosts[Math.floor(Math.random() * HOSTS)]!;
        const sent = performance.now();
        const res = await operator.post(`/api/hosts/${host.id}/deploy`, {
          source_vmid: 9000,
          new_vmid: 1000 + i,
          name: `web-${i}`,
          full: true,
          storage: 'local-lvm',
          cores: 2,
          memory_mb: 2048,
          disk_gb: 20,
          network: { bridge: 'vmbr0', ip: 'dhcp' },
          ci_user: 'debian',
          server_key_ids: keyIds,
          cloud_config_id: config.body.id,
        });
        expect(res.status, res.text).toBe(202);
        requested.set(res.body.operation_id, sent);
      }),
    );
    const deadline = performance.now() + 10_000;
    while ([...requested.keys()].some((id) => !received.has(id)) && performance.now() < deadline) await sleep(50);
    clearInterval(sampler);
    peak = Math.max(peak, rssMb(pid));
    running = false;
    for (const { agent, beats } of agents) (clearInterval(beats), agent.destroy());
    await Promise.all(agents.map((a) => a.loop));

    const latencies = [...requested].map(([id, sent]) => (received.get(id) ?? Infinity) - sent).sort((a, b) => a - b);
    const missing = latencies.filter((l) => l === Infinity).length;
    const p50 = quantile(latencies, 0.5);
    const p99 = quantile(latencies, 0.99);
    const succeeded = (await admin.get('/api/operations?status=succeeded&limit=500')).body as { type: string }[];
    console.log(
      [
        `deploy delivery: ${HOSTS} agents long-polling, ${requested.size} deploys (2 server keys and a cloud config each) accepted over ${((performance.now() - start) / 1000).toFixed(1)} s`,
        `  delivery p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${latencies.at(-1)!.toFixed(0)} ms (target p99 ≤ 2000 ms)`,
        `  server RSS: idle ${idle.toFixed(1)} MB, peak under load ${peak.toFixed(1)} MB, rise ${(peak - idle).toFixed(1)} MB (target ≤ 30 MB)`,
      ].join('\n'),
    );
    expect(wrong).toEqual([]);
    expect(missing).toBe(0);
    expect(requested.size).toBe(DEPLOYS);
    expect(succeeded.filter((op) => op.type === 'deploy')).toHaveLength(DEPLOYS);
    expect(p99).toBeLessThanOrEqual(2000);
    expect(peak - idle).toBeLessThanOrEqual(30);
  });
});
