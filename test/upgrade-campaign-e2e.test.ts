// End to end, an agent upgrade campaign (PRODUCT.md "Collections, scripts, campaigns and release
// channels"): four real bash agents, installed by the real installer from the built server in its own
// process, looping as their service would (fake pvesh/qm/pct/systemctl on PATH, each in a temp
// --root). Then the server is upgraded under them, as a release does: the same database and port,
// a package that ships a newer stable agent and a pre-release. One campaign over the four hosts,
// waves of one, with no version: each host goes to the newest of its channel (the beta host to the
// pre-release, the stable ones to the release), the pinned host is skipped naming its pin, and each
// wave ends only when the heartbeat rule settles its upgrade (the new version, started after the
// upgrade began).
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { TestClient } from './helpers/http.js';
import { packageShipping, servedAgent } from './helpers/shipped-agents.js';
import { until, freePort } from './helpers/until.js';
import { installAgent, spawnAgent } from './helpers/real-agent.js';

const root = path.resolve(import.meta.dirname, '..');
const SETUP_TOKEN = 'upgrade-campaign-setup-token-0123456789';
const PASSWORD = 'upgrade-campaign-password';
const repoAgent = fs.readFileSync(path.join(root, 'reporter/host-agent.sh'), 'utf8');
const STABLE = /^HOMEFLEET_AGENT_VERSION="([^"]+)"$/m.exec(repoAgent)![1]!;
const [major, minor, patch] = STABLE.split('-')[0]!.split('.').map(Number) as [number, number, number];
/** The release the upgraded server ships, and a pre-release newer than it. */
const NEXT = `${major}.${minor}.${patch + 1}`;
const BETA = `${major}.${minor + 1}.0-beta.1`;
const HOSTS = ['pve-1', 'pve-2', 'pve-3', 'pve-4'];

let server: BuiltServer;
let serverEnv: Record<string, string>;
let admin: TestClient;
let dir: string;
const packages: string[] = [];
const agents: ChildProcess[] = [];
const ids: Record<string, number> = {};

const installedAgent = (name: string) => fs.readFileSync(path.join(dir, name, 'usr/local/lib/homefleet-agent/host-agent.sh'), 'utf8');
const host = async (name: string) => (await admin.get(`/api/hosts/${ids[name]}`)).body;

beforeAll(async () => {
  // Before: the repository's agent. After the server's upgrade: NEXT as the current agent, STABLE and BETA kept.
  packages.push(await packageShipping({}));
  packages.push(await packageShipping({ current: repoAgent.replace(/^HOMEFLEET_AGENT_VERSION=.*$/m, `HOMEFLEET_AGENT_VERSION="${NEXT}"`), kept: { [STABLE]: servedAgent(STABLE), [BETA]: servedAgent(BETA) } }));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-upgrade-campaign-e2e-'));
  serverEnv = agentServerEnv(dir, SETUP_TOKEN, { PORT: String(await freePort()), FLEET_HEARTBEAT_INTERVAL_S: '2' });
  server = await startBuiltServer(serverEnv, [], packages[0]);
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);

  for (const name of HOSTS) {
    const hostRoot = path.join(dir, name);
    fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
    fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), `${`upgrade${name}`.padEnd(32, '0')}\n`);
    fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), `${name}\n`);
    const env = {
      PATH: `${path.join(root, 'reporter/test/fixtures/agent-bin')}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
      HOME: dir,
      TMPDIR: dir,
      FAKE_SYSTEMCTL_LOG: path.join(dir, `${name}-systemctl.log`),
      HOMEFLEET_INTERVAL_MIN_S: '1',
      HOMEFLEET_CURL_MAX_TIME: '5',
    };
    const token = (await admin.post('/api/hosts/enrollment-tokens', { name })).body.token as string;
    await installAgent(server.url, token, hostRoot, env);
    // The service, as systemd would run it: the upgrade execs the new version in this same process.
    agents.push(spawnAgent(hostRoot, env));
  }
  const hosts = await until('the four hosts to report', async () => {
    const list = (await admin.get('/api/hosts')).body as { id: number; hostname: string; status: string; agent_version: string }[];
    return list.length === 4 && list.every((h) => h.status === 'online' && h.agent_version === STABLE) && list;
  });
  for (const h of hosts) ids[h.hostname] = h.id;

  // The server's upgrade: stopped, and started from the new package on the same database and port.
  const stopped = await server.stop();
  expect(stopped.exitCode, stopped.all).toBe(0);
  server = await startBuiltServer(serverEnv, [], packages[1]);
}, 120_000);

afterAll(async () => {
  for (const agent of agents) {
    try {
      process.kill(-agent.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await server?.stop();
  for (const d of [dir, ...packages]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

describe('an agent.upgrade campaign over real agents', () => {
  it('upgrades three hosts one wave at a time, each along its channel and settled by the heartbeat rule; the pinned host is skipped naming its pin', async () => {
    expect((await admin.patch(`/api/hosts/${ids['pve-2']}`, { agent_channel: 'beta' })).status).toBe(200);
    expect((await admin.patch(`/api/hosts/${ids['pve-4']}`, { agent_pin: STABLE })).status).toBe(200);
    const target = { host_ids: HOSTS.map((name) => ids[name]) };
    const pinned = { host_id: ids['pve-4'], vmid: null, name: 'pve-4', reason: `pinned to agent ${STABLE}` };

    // A version named: only the beta host may take a pre-release.
    const beta = await admin.post('/api/campaigns?dry_run=true', { name: 'beta', target, step: { type: 'agent.upgrade', version: BETA } });
    expect(beta.body).toEqual({
      waves: [[{ host_id: ids['pve-2'], vmid: null, name: 'pve-2' }]],
      skipped: [
        { host_id: ids['pve-1'], vmid: null, name: 'pve-1', reason: `follows the stable channel; ${BETA} is a beta version` },
        { host_id: ids['pve-3'], vmid: null, name: 'pve-3', reason: `follows the stable channel; ${BETA} is a beta version` },
        pinned,
      ],
    });

    const res = await admin.post('/api/campaigns', { name: 'agents', target, step: { type: 'agent.upgrade' }, wave_size: 1 });
    expect(res.status, res.text).toBe(201);
    expect(res.body.targets.map((t: { wave: number; name: string; status: string }) => `${t.wave} ${t.name} ${t.status}`)).toEqual(['1 pve-1 running', '2 pve-2 pending', '3 pve-3 pending', '0 pve-4 skipped']);
    const done = await until(
      'the campaign to end',
      async () => {
        const c = (await admin.get(`/api/campaigns/${res.body.id}`)).body;
        return c.status !== 'running' && c;
      },
      90_000,
    );
    expect(done).toMatchObject({ status: 'succeeded', counts: { succeeded: 3, failed: 0, skipped: 1 } });
    expect(done.targets[3]).toMatchObject({ name: 'pve-4', status: 'skipped', reason: `pinned to agent ${STABLE}` });

    // Each host runs the newest of its channel, from its own new process; the pinned one is untouched.
    const want: Record<string, string> = { 'pve-1': NEXT, 'pve-2': BETA, 'pve-3': NEXT, 'pve-4': STABLE };
    for (const name of HOSTS) {
      expect((await host(name)).agent_version, name).toBe(want[name]);
      expect(installedAgent(name), name).toContain(`HOMEFLEET_AGENT_VERSION="${want[name]}"`);
    }
    expect((await host('pve-4')).upgrade).toBeNull();
    // The heartbeat rule decided each wave: a target succeeded only once its host's upgrade had
    // (a heartbeat from the new version, started after the upgrade began), and the next wave's
    // upgrade began only after that.
    const upgrades = await Promise.all(['pve-1', 'pve-2', 'pve-3'].map(async (name) => (await host(name)).upgrade));
    upgrades.forEach((u, i) => {
      expect(u).toMatchObject({ state: 'succeeded', version: want[HOSTS[i]!], from: STABLE });
      expect(Date.parse(done.targets[i].finished_at)).toBeGreaterThanOrEqual(Date.parse(u.finished_at));
      expect(Date.parse(u.finished_at)).toBeGreaterThan(Date.parse(u.started_at));
    });
    for (let i = 1; i < 3; i++) expect(Date.parse(upgrades[i].requested_at)).toBeGreaterThanOrEqual(Date.parse(upgrades[i - 1].finished_at));
  }, 120_000);
});
