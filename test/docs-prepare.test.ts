// server/README.md § Prepare a host runs as written: its shell blocks, taken from the README verbatim, run in
// real bash with real curl against the built server (dist/server/main.js in its own process on
// 127.0.0.1), with only the variables the README tells the reader to set. The test enrolls the host
// and plays its agent over the agent's own wire (a heartbeat with its storages, the command poll, the
// cached file fetched with the host token, the volumes listed, the results), so the README's waits end
// as they would on a real host. Nothing is fetched from the URLs the README names: the played agent
// only checks that the commands carry them exactly.
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { agentServerEnv } from './helpers/built-server.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { bearer } from './helpers/hosts.js';
import { TestClient } from './helpers/http.js';
import { killWhenTestEnds } from './helpers/listening.js';
import { shellBlocks } from './helpers/readme.js';

const SETUP_TOKEN = 'docs-prepare-setup-token-0123456789a';
const README = path.resolve(import.meta.dirname, '../server/README.md');
const ISO_URL = 'https://cdimage.debian.org/cdimage/archive/12.8.0/amd64/iso-cd/debian-12.8.0-amd64-netinst.iso';
const TEMPLATE_URL = 'https://download.proxmox.com/images/system/debian-12-standard_12.7-1_amd64.tar.zst';
const SNIPPET = '#cloud-config\npackage_update: true\npackages: [qemu-guest-agent]\nruncmd:\n  - systemctl enable --now qemu-guest-agent\n';
const LOCAL = { storage: 'local', type: 'dir', content: ['iso', 'vztmpl', 'backup', 'snippets'], avail: 80 * 2 ** 30, total: 100 * 2 ** 30, active: true, shared: false };
const LVM = { storage: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'], avail: 300 * 2 ** 30, total: 400 * 2 ** 30, active: true, shared: false };

const walkthrough = () => shellBlocks(fs.readFileSync(README, 'utf8'), 'Prepare a host', 'docs-prepare');

let server: Headless;
let dataDir: string;
let token: string;
let host: { id: number; agent: TestClient };
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-docs-prepare-'));

const heartbeat = (storageSha: string | null) =>
  host.agent.post('/api/agent/heartbeat', {
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: 'pve1',
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: [],
    storages: [LOCAL, LVM],
    storage_sha256: storageSha,
  });

beforeAll(async () => {
  await ensureBuilt();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-docs-prepare-data-'));
  server = await startHeadless(agentServerEnv(dataDir, SETUP_TOKEN, { FLEET_HEARTBEAT_INTERVAL_S: '600' }), { shared: true });
  const admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  const made = await admin.post('/api/tokens', { name: 'docs walkthrough', role: 'administrator' });
  expect(made.status, made.text).toBe(201);
  token = made.body.token;

  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: 'pve1' });
  expect(enrollment.status, enrollment.text).toBe(201);
  const enrolled = await new TestClient(server.local).post('/api/agent/enroll', { hostname: 'pve1', machine_id: 'docs-prepare-pve1', agent_version: '1.0.0' }, bearer(enrollment.body.token));
  expect(enrolled.status, enrolled.text).toBe(201);
  host = { id: enrolled.body.host_id, agent: new TestClient(server.local, bearer(enrolled.body.host_token)) };
  const beat = await heartbeat(null);
  expect(beat.status, beat.text).toBe(200);
  const listed = await host.agent.post('/api/agent/storage', { storage: 'local', volumes: [] });
  expect(listed.status, listed.text).toBe(204);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('server/README.md § Prepare a host', () => {
  it('marks each shell block: set by the reader, or run here', () => {
    expect(walkthrough().map((b) => b.marker)).toEqual(['the reader sets', 'run', 'run', 'run', 'run']);
  });

  it('the reader sets B, TOKEN and HOST_ID, and nothing else', () => {
    const set = walkthrough().find((b) => b.marker === 'the reader sets')!;
    expect([...set.code.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1])).toEqual(['B', 'TOKEN', 'HOST_ID']);
  });

  it('runs as written: two downloads with exactly the given values, a snippet uploaded once and pushed, the three volumes listed', async () => {
    const script = walkthrough()
      .filter((b) => b.marker === 'run')
      .map((b) => b.code)
      .join('\n');
    const bash = execa('bash', ['-eu', '-c', script], {
      cwd: home,
      env: { PATH: process.env.PATH!, HOME: home, LANG: 'C.UTF-8', B: server.local, TOKEN: token, HOST_ID: String(host.id) },
      extendEnv: false,
      reject: false,
      all: true,
    });
    killWhenTestEnds(bash);

    // The host's agent: the three commands the walkthrough queued, as the next polls hand them out.
    const commands: any[] = [];
    for (let polls = 0; commands.length < 3 && polls < 10 && bash.exitCode === null; polls++) {
      const res = await host.agent.get('/api/agent/commands?wait=10');
      expect([200, 204], res.text).toContain(res.status);
      if (res.status === 200) commands.push(...res.body.commands);
    }
    if (commands.length !== 3) {
      bash.kill();
      throw new Error(`${commands.length} commands for the host; the walkthrough printed:\n${(await bash).all}`);
    }
    const [iso, template, push] = commands;
    expect(iso).toEqual({ type: 'download', operation_id: expect.any(String), storage: 'local', url: ISO_URL, filename: 'debian-12.8.0-amd64-netinst.iso', content: 'iso' });
    expect(template).toEqual({ type: 'download', operation_id: expect.any(String), storage: 'local', url: TEMPLATE_URL, filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' });
    const sha256 = createHash('sha256').update(SNIPPET).digest('hex');
    expect(push).toEqual({ type: 'upload', operation_id: expect.any(String), file_id: expect.any(Number), name: 'user-data.yaml', size: SNIPPET.length, sha256, storage: 'local', content: 'snippets', replace: false });

    // The agent fetches the cached bytes with its host token: the README's snippet, byte for byte.
    const fetched = await host.agent.get(`/api/agent/files/${push.file_id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.text).toBe(SNIPPET);

    // As the agent does: the storage's new listing (its hash changed), then the results.
    const now = Math.floor(Date.now() / 1000);
    const volumes = [
      { volid: 'local:iso/debian-12.8.0-amd64-netinst.iso', format: 'iso', size: 661_651_456, ctime: now },
      { volid: 'local:snippets/user-data.yaml', format: 'snippet', size: SNIPPET.length, ctime: now },
      { volid: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst', format: 'tzst', size: 126_009_454, ctime: now },
    ];
    expect((await host.agent.post('/api/agent/storage', { storage: 'local', volumes })).status).toBe(204);
    expect((await heartbeat(createHash('sha256').update(JSON.stringify(volumes)).digest('hex'))).status).toBe(200);
    for (const c of commands) {
      const done = await host.agent.post(`/api/agent/operations/${c.operation_id}/result`, { exit_code: 0, output: `homefleet-agent: ${c.type} done\n`, finished_at: new Date().toISOString() });
      expect(done.status, done.text).toBe(204);
    }

    const ran = await bash;
    expect(ran.exitCode, ran.all).toBe(0);
    const lines = ran.stdout.split('\n');
    expect(JSON.parse(lines[0]!).map((s: { storage: string }) => s.storage)).toEqual(['local', 'local-lvm']);
    expect(JSON.parse(lines[1]!)).toEqual({ operation_id: iso.operation_id, status: 'pending' });
    expect(JSON.parse(lines[2]!)).toEqual({ operation_id: template.operation_id, status: 'pending' });
    expect(JSON.parse(lines[3]!)).toMatchObject({ id: push.file_id, name: 'user-data.yaml', size: SNIPPET.length, sha256 });
    expect(JSON.parse(lines[4]!)).toEqual({ operation_id: push.operation_id, status: 'pending' });
    expect(lines.slice(5, 8).map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ id: iso.operation_id, type: 'download', status: 'succeeded' }),
      expect.objectContaining({ id: template.operation_id, type: 'download', status: 'succeeded' }),
      expect.objectContaining({ id: push.operation_id, type: 'upload', status: 'succeeded' }),
    ]);
    expect(lines.slice(8).filter(Boolean)).toEqual(volumes.map((v) => `"volid":"${v.volid}"`));
    // The cache holds the snippet once, named by its SHA-256.
    expect(fs.readdirSync(path.join(dataDir, 'files'))).toEqual([sha256]);
  }, 90_000);
});
