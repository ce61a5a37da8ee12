// README.md § Run a campaign runs as written: its shell blocks, taken from the README verbatim, run in
// real bash with real curl against the built server (dist/server/main.js in its own process on
// 127.0.0.1), with only the variables the README tells the reader to set. The test enrolls the host
// and plays its agent over the agent's own wire (heartbeat with the four web containers, command
// polls, results), so the README's wait for the campaign ends as it would on a real host.
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

const SETUP_TOKEN = 'docs-campaign-setup-token-0123456789';
const README = path.resolve(import.meta.dirname, '../README.md');

const walkthrough = () => shellBlocks(fs.readFileSync(README, 'utf8'), 'Run a campaign', 'docs-campaign');

let server: Headless;
let token: string;
let host: { id: number; agent: TestClient };
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-docs-campaign-'));

beforeAll(async () => {
  await ensureBuilt();
  server = await startHeadless(
    { DB_PATH: tempDbPath(), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true', FLEET_HEARTBEAT_INTERVAL_S: '600' },
    { shared: true },
  );
  const admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  const made = await admin.post('/api/tokens', { name: 'docs campaign', role: 'operator' });
  expect(made.status, made.text).toBe(201);
  token = made.body.token;
  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: 'pve1' });
  const enrolled = await new TestClient(server.local).post('/api/agent/enroll', { hostname: 'pve1', machine_id: 'docs-campaign-pve1', agent_version: '1.0.0' }, bearer(enrollment.body.token));
  expect(enrolled.status, enrolled.text).toBe(201);
  host = { id: enrolled.body.host_id, agent: new TestClient(server.local, bearer(enrolled.body.host_token)) };
  const beat = await host.agent.post('/api/agent/heartbeat', {
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: 'pve1',
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: [201, 202, 203, 204].map((vmid) => ({ vmid, name: `web-${vmid - 200}`, type: 'lxc', status: 'running' })),
  });
  expect(beat.status, beat.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('README.md § Run a campaign', () => {
  it('marks each shell block: set by the reader, or run here', () => {
    expect(walkthrough().map((b) => b.marker)).toEqual(['the reader sets', 'run', 'run']);
  });

  it('the reader sets B, TOKEN and WEB, and nothing else', () => {
    const set = walkthrough().find((b) => b.marker === 'the reader sets')!;
    expect([...set.code.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1])).toEqual(['B', 'TOKEN', 'WEB']);
  });

  it('runs as written: previews the waves, runs them two at a time, and follows the campaign to its end', async () => {
    const script = walkthrough()
      .filter((b) => b.marker === 'run')
      .map((b) => b.code)
      .join('\n');
    const set = walkthrough().find((b) => b.marker === 'the reader sets')!.code;
    const web = /^WEB=(\S+)/m.exec(set)![1]!;
    const bash = execa('bash', ['-eu', '-c', script], {
      cwd: home,
      env: { PATH: process.env.PATH!, HOME: home, LANG: 'C.UTF-8', B: server.local, TOKEN: token, WEB: web },
      extendEnv: false,
      reject: false,
      all: true,
    });
    killWhenTestEnds(bash);

    // The host's agent: each command reported done a moment after it came; the vmids in the order they came, with the time.
    const ran: { vmid: number; at: number }[] = [];
    const deadline = Date.now() + 60_000;
    while (bash.exitCode === null && Date.now() < deadline) {
      const res = await host.agent.get('/api/agent/commands?wait=2');
      expect([200, 204], res.text).toContain(res.status);
      for (const command of res.status === 200 ? res.body.commands : []) {
        expect(command).toMatchObject({ type: 'guest.action', action: 'reboot', guest_type: 'lxc' });
        ran.push({ vmid: command.vmid, at: Date.now() });
        expect((await host.agent.post(`/api/agent/operations/${command.operation_id}/result`, { exit_code: 0, output: '' })).status).toBe(204);
      }
    }
    const done = await bash;
    expect(done.exitCode, done.all).toBe(0);
    const lines = done.stdout.split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({
      waves: [
        [
          { host_id: host.id, vmid: 201, name: 'web-1' },
          { host_id: host.id, vmid: 202, name: 'web-2' },
        ],
        [
          { host_id: host.id, vmid: 203, name: 'web-3' },
          { host_id: host.id, vmid: 204, name: 'web-4' },
        ],
      ],
      skipped: [],
    });
    expect(lines[1]).toMatch(/^campaign \d+$/);
    const campaign = JSON.parse(lines[2]!);
    expect(campaign).toMatchObject({ name: 'restart web', status: 'succeeded', counts: { succeeded: 4, failed: 0, skipped: 0 } });
    // Two at a time, the second pair ten seconds after the first ended.
    expect(ran.map((r) => r.vmid).sort()).toEqual([201, 202, 203, 204]);
    expect(ran[2]!.at - ran[1]!.at).toBeGreaterThanOrEqual(9_500);
  }, 90_000);
});
