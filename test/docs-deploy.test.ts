// server/README.md § Deploy a guest runs as written: its shell blocks, taken from the README verbatim, run
// in real bash with real curl and ssh-keygen against the built server (dist/server/main.js in its
// own process on 127.0.0.1), with only the variables the README tells the reader to set. The test
// enrolls the host and plays its agent over the agent's own wire (heartbeat with template 9000,
// command poll, result), so the README's wait for the operation ends as it would on a real host.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { bearer } from './helpers/hosts.js';
import { TestClient } from './helpers/http.js';
import { killWhenTestEnds } from './helpers/listening.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';
import { shellBlocks } from './helpers/readme.js';

const SETUP_TOKEN = 'docs-deploy-setup-token-0123456789ab';
const README = path.resolve(import.meta.dirname, '../server/README.md');

const walkthrough = () => shellBlocks(fs.readFileSync(README, 'utf8'), 'Deploy a guest', 'docs-deploy');

let server: Headless;
let admin: TestClient;
let token: string;
let host: { id: number; agent: TestClient };
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-docs-deploy-'));

beforeAll(async () => {
  await ensureBuilt();
  server = await startHeadless(
    { DB_PATH: tempDbPath(), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true', FLEET_HEARTBEAT_INTERVAL_S: '600' },
    { shared: true },
  );
  admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  const made = await admin.post('/api/tokens', { name: 'docs walkthrough', role: 'administrator' });
  expect(made.status, made.text).toBe(201);
  token = made.body.token;

  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: 'pve1' });
  expect(enrollment.status, enrollment.text).toBe(201);
  const enrolled = await new TestClient(server.local).post('/api/agent/enroll', { hostname: 'pve1', machine_id: 'docs-deploy-pve1', agent_version: '1.0.0' }, bearer(enrollment.body.token));
  expect(enrolled.status, enrolled.text).toBe(201);
  host = { id: enrolled.body.host_id, agent: new TestClient(server.local, bearer(enrolled.body.host_token)) };
  const beat = await host.agent.post('/api/agent/heartbeat', {
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: 'pve1',
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: [{ vmid: 9000, name: 'debian-12-cloud', type: 'qemu', status: 'stopped', template: true }],
  });
  expect(beat.status, beat.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('server/README.md § Deploy a guest', () => {
  it('marks each shell block: run here, set by the reader, or run on the Proxmox host', () => {
    const blocks = walkthrough();
    expect(blocks.map((b) => b.marker)).toEqual(['on the Proxmox host', 'the reader sets', 'run', 'run', 'run']);
    expect(blocks[0]!.code).toContain('debian-12-genericcloud-amd64.qcow2');
    expect(blocks[0]!.code).toContain('qm template 9000');
  });

  it('the reader sets B, TOKEN and HOST_ID, and nothing else', () => {
    const set = walkthrough().find((b) => b.marker === 'the reader sets')!;
    expect([...set.code.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1])).toEqual(['B', 'TOKEN', 'HOST_ID']);
  });

  it('runs as written: saves the key and the config, queues the deploy, and follows it to its end', async () => {
    const script = walkthrough()
      .filter((b) => b.marker === 'run')
      .map((b) => b.code)
      .join('\n');
    // Only what a reader's shell has, and the three variables the README says to set; -eu stops at the
    // first failing step, which a reader pasting the blocks would see there.
    const bash = execa('bash', ['-eu', '-c', script], {
      cwd: home,
      env: { PATH: process.env.PATH!, HOME: home, LANG: 'C.UTF-8', B: server.local, TOKEN: token, HOST_ID: String(host.id) },
      extendEnv: false,
      reject: false,
      all: true,
    });
    killWhenTestEnds(bash);

    // The host's agent: the command the walkthrough's deploy queued, as the next poll hands it out.
    let commands: any[] = [];
    for (let polls = 0; commands.length === 0 && polls < 6 && bash.exitCode === null; polls++) {
      const res = await host.agent.get('/api/agent/commands?wait=10');
      expect([200, 204], res.text).toContain(res.status);
      if (res.status === 200) commands = res.body.commands;
    }
    if (commands.length !== 1) {
      bash.kill();
      throw new Error(`${commands.length} commands for the host; the walkthrough printed:\n${(await bash).all}`);
    }
    const [command] = commands;

    const keyLine = fs.readFileSync(path.join(home, '.ssh/homefleet_deploy.pub'), 'utf8').trim();
    const [config] = (await admin.get('/api/cloud-configs')).body;
    const body = (await admin.get(`/api/cloud-configs/${config.id}`)).body.body;
    expect(body).toBe('#cloud-config\npackage_update: true\npackages: [nginx, qemu-guest-agent]\nruncmd:\n  - systemctl enable --now qemu-guest-agent\n');
    expect(command).toEqual({
      type: 'deploy',
      operation_id: expect.any(String),
      new_vmid: 120,
      rebuild: false,
      source: { kind: 'qemu', vmid: 9000 },
      name: 'web-1',
      full: true,
      storage: 'local-lvm',
      cores: 2,
      memory_mb: 2048,
      disk_gb: 20,
      network: { bridge: 'vmbr0', ip: 'dhcp' },
      ci_user: 'debian',
      ssh_keys: [keyLine],
      cloud_config: body,
      snippets_storage: 'local',
      start: true,
    });
    // What the README says is there while the deploy runs: a deploy operation, and instance 120 in testing.
    expect((await admin.get(`/api/operations/${command.operation_id}`)).body).toMatchObject({ type: 'deploy', action: null, vmid: 120, host_id: host.id, status: 'sent' });
    expect((await admin.get('/api/instances/120')).body).toMatchObject({
      vmid: 120,
      name: 'web-1',
      state: 'testing',
      stack: 'development',
      deploy: { host_id: host.id, source_type: 'qemu', source_vmid: 9000, server_key_names: ['deploy'], cloud_config_name: 'web' },
    });

    const output = '$ qm clone 9000 120 --name web-1 --full 1 --storage local-lvm\nhomefleet-agent: guest 120 deployed\n';
    expect((await host.agent.post(`/api/agent/operations/${command.operation_id}/result`, { exit_code: 0, output })).status).toBe(204);

    const ran = await bash;
    expect(ran.exitCode, ran.all).toBe(0);
    const lines = ran.stdout.split('\n');
    expect(lines[0]).toMatch(/^server key \d+, cloud config \d+$/);
    expect(JSON.parse(lines[1]!)).toEqual({ operation_id: command.operation_id, status: 'pending' });
    expect(JSON.parse(lines[2]!)).toMatchObject({ id: command.operation_id, type: 'deploy', vmid: 120, status: 'succeeded', exit_code: 0 });
    expect(JSON.parse(lines[3]!)).toMatchObject({ vmid: 120, name: 'web-1', state: 'testing', deploy: { source_vmid: 9000 } });
  }, 90_000);
});
