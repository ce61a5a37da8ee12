// End to end: the real installer (as the server serves it) and the real bash agent, with fake
// qm/pct/ip/systemctl on PATH and a temp --root, against the real server on 127.0.0.1.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assembleScript } from '../server/releases/assemble.js';
import { startServer, type TestServer } from './helpers/server.js';

const root = path.resolve(import.meta.dirname, '..');
const fakeBin = path.join(root, 'reporter/test/fixtures/agent-bin');
const agentVersion = /^HOMEFLEET_AGENT_VERSION="([^"]+)"$/m.exec(fs.readFileSync(path.join(root, 'reporter/host-agent.sh'), 'utf8'))![1]!;

let server: TestServer;
let dir: string;
let hostRoot: string;
let env: Record<string, string>;

beforeEach(async () => {
  server = await startServer({ config: { agentAllowHttp: true } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-agent-e2e-'));
  hostRoot = path.join(dir, 'root');
  fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), 'e2e0123456789abcdef0123456789abcd\n');
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), 'pve-e2e\n');
  env = {
    PATH: `${fakeBin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: dir,
    TMPDIR: dir,
    FAKE_SYSTEMCTL_LOG: path.join(dir, 'systemctl.log'),
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
  };
});

afterEach(async () => {
  // Units the fake systemctl started (watchdog, restarted agent) run in their own sessions.
  for (const file of fs.readdirSync(hostRoot).filter((f) => f.endsWith('.pid'))) {
    try {
      process.kill(-Number(fs.readFileSync(path.join(hostRoot, file), 'utf8')), 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** `curl -fsSL <server>/install/agent.sh | bash -s -- --token …`: the served installer, no --server. */
async function install(token: string) {
  return execa('bash', ['-c', `set -o pipefail; curl -fsSL "$1/install/agent.sh" | bash -s -- --token "$2" --root "$3"`, 'install', server.baseUrl, token, hostRoot], {
    env,
    extendEnv: false,
    reject: false,
    timeout: 30_000,
  });
}

async function agentOnce() {
  const agent = path.join(hostRoot, 'usr/local/lib/homefleet-agent/host-agent.sh');
  return execa('bash', [agent, '--root', hostRoot, '--once'], { env, extendEnv: false, reject: false, timeout: 30_000 });
}

async function enrollmentToken(body: Record<string, unknown> = {}): Promise<string> {
  const res = await server.client.post('/api/hosts/enrollment-tokens', { name: 'e2e', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body.token;
}

// Each test runs the real installer and agent (bash, curl, perl per JSON read) beside the whole suite on 2 cores.
describe('the real agent against the real server', { timeout: 60_000 }, () => {
  it('installs, enrolls, heartbeats its guests, and applied drift shows in history as agent:<hostname>', async () => {
    // The registry already knows vmid 100 under another name; 101, 200 and 201 are unknown to it.
    const created = await server.client.post('/api/instances', { vmid: 100, name: 'old-web', state: 'deployed', stack: 'development' });
    expect(created.status, created.text).toBe(201);

    const installed = await install(await enrollmentToken());
    expect(installed.exitCode, installed.stderr).toBe(0);
    expect(fs.readFileSync(env.FAKE_SYSTEMCTL_LOG!, 'utf8')).toBe('daemon-reload\nenable --now homefleet-agent.service\n');
    const state = path.join(hostRoot, 'etc/homefleet-agent');
    expect(fs.readFileSync(path.join(state, 'server_url'), 'utf8').trim()).toBe(server.baseUrl);
    expect(fs.readFileSync(path.join(state, 'host_token'), 'utf8')).toMatch(/^hfh_[A-Za-z0-9_-]{43}\n$/);

    const beat = await agentOnce();
    expect(beat.exitCode, beat.stderr).toBe(0);

    const list = await server.client.get('/api/hosts');
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    const host = list.body[0];
    expect(host).toMatchObject({
      hostname: 'pve-e2e',
      machine_id: 'e2e0123456789abcdef0123456789abcd',
      status: 'online',
      agent_version: agentVersion,
      addresses: ['192.0.2.10', '2001:db8::10'],
      hypervisor_version: '8.2.4',
      guest_count: 4,
    });

    const detail = await server.client.get(`/api/hosts/${host.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.guests).toEqual([
      { vmid: 100, name: 'web', type: 'qemu', status: 'running', template: false, lock: null },
      { vmid: 101, name: 'build-runner', type: 'qemu', status: 'stopped', template: false, lock: null },
      { vmid: 200, name: 'db', type: 'lxc', status: 'running', template: false, lock: null },
      { vmid: 201, name: 'cache', type: 'lxc', status: 'stopped', template: false, lock: null },
    ]);
    expect(detail.body.drift).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'name_differs', vmid: 100, guest_name: 'web', instance_name: 'old-web' }),
        expect.objectContaining({ kind: 'guest_without_instance', vmid: 200, guest_name: 'db' }),
      ]),
    );
    // The registry is not changed by a heartbeat alone.
    expect((await server.client.get('/api/instances/100')).body.name).toBe('old-web');

    const applied = await server.client.post(`/api/hosts/${host.id}/drift/apply`, { all: true });
    expect(applied.status, applied.text).toBe(200);
    expect((await server.client.get('/api/instances/100')).body.name).toBe('web');
    expect((await server.client.get('/api/instances/200')).body.name).toBe('db');
    const history = await server.client.get('/api/instances/100/history');
    expect(history.body).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'name', old_value: 'old-web', new_value: 'web', changed_by: 'agent:pve-e2e' })]));
    const createdHistory = await server.client.get('/api/instances/200/history');
    expect(createdHistory.body.every((h: { changed_by: string }) => h.changed_by === 'agent:pve-e2e')).toBe(true);

    // After the drift is applied the next heartbeat reports none.
    expect((await agentOnce()).exitCode).toBe(0);
    expect((await server.client.get(`/api/hosts/${host.id}`)).body.drift).toEqual([]);
  });

  it('deleting the host uninstalls the agent, which confirms with its receipt', async () => {
    expect((await install(await enrollmentToken())).exitCode).toBe(0);
    expect((await agentOnce()).exitCode).toBe(0);
    const [host] = (await server.client.get('/api/hosts')).body;

    const deletion = await server.client.delete(`/api/hosts/${host.id}`);
    expect(deletion.status, deletion.text).toBe(202);
    expect(deletion.body).toMatchObject({ status: 'pending' });

    const run = await agentOnce();
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('the server confirmed the removal');
    expect(fs.existsSync(path.join(hostRoot, 'etc/homefleet-agent'))).toBe(false);
    expect(fs.existsSync(path.join(hostRoot, 'usr/local/lib/homefleet-agent'))).toBe(false);
    expect(fs.existsSync(path.join(hostRoot, 'etc/systemd/system/homefleet-agent.service'))).toBe(false);

    const after = await server.client.get(`/api/hosts/${host.id}`);
    expect(after.body.status).toBe('deleted');
    expect(after.body.deletion).toMatchObject({ operation_id: deletion.body.operation_id, status: 'confirmed' });
    // The list says so too, and offers nothing more for it.
    expect((await server.client.get('/api/hosts')).body[0]).toMatchObject({ id: host.id, status: 'deleted', upgrade_available: false });
  });

  it('a leaked host token is rotated: revoke it, install again with a re-bind token, the agent reports with the new token', async () => {
    expect((await install(await enrollmentToken())).exitCode).toBe(0);
    expect((await agentOnce()).exitCode).toBe(0);
    const [host] = (await server.client.get('/api/hosts')).body;
    const tokenFile = path.join(hostRoot, 'etc/homefleet-agent/host_token');
    const leaked = fs.readFileSync(tokenFile, 'utf8');

    expect((await server.client.post(`/api/hosts/${host.id}/revoke-token`)).status).toBe(204);
    const refused = await agentOnce();
    expect(refused.exitCode).toBe(75);
    expect(refused.stderr).toContain("refused this host's token (401)");

    // Anyone's ordinary enrollment token cannot take the host over in the re-bind window.
    const takeover = await install(await enrollmentToken());
    expect(takeover.exitCode).toBe(1);
    expect(takeover.stderr).toContain('already enrolled');
    expect(fs.readFileSync(tokenFile, 'utf8')).toBe(leaked);

    const again = await install(await enrollmentToken({ host_id: host.id }));
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fs.readFileSync(tokenFile, 'utf8')).not.toBe(leaked);
    expect(fs.readFileSync(env.FAKE_SYSTEMCTL_LOG!, 'utf8')).toContain('restart homefleet-agent.service');
    expect((await agentOnce()).exitCode).toBe(0);
    const hosts = (await server.client.get('/api/hosts')).body;
    expect(hosts).toHaveLength(1);
    expect(hosts[0]).toMatchObject({ id: host.id, status: 'online' });
  });

  it('without FLEET_AGENT_ALLOW_HTTP a plain-HTTP server refuses the enrollment and nothing is installed', async () => {
    await server.stop();
    server = await startServer({ config: { agentAllowHttp: false } });
    const run = await install(await enrollmentToken());
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('requires https');
    expect(fs.existsSync(path.join(hostRoot, 'etc/homefleet-agent'))).toBe(false);
  });

  describe('upgrades', () => {
    let agentDir: string;
    const installedAgent = () => path.join(hostRoot, 'usr/local/lib/homefleet-agent/host-agent.sh');
    // The agent as the server serves it: its helpers (reporter/lib) inlined.
    const current = assembleScript(fs.readFileSync(path.join(root, 'reporter/host-agent.sh'), 'utf8'), (file) => fs.readFileSync(path.join(root, 'reporter', file), 'utf8'));

    /** A server shipping the agents of a temp folder: the current one and kept older ones. */
    async function serverWithReleases() {
      await server.stop();
      agentDir = path.join(dir, 'releases');
      fs.mkdirSync(path.join(agentDir, 'kept'), { recursive: true });
      fs.copyFileSync(path.join(root, 'reporter/install-agent.sh'), path.join(agentDir, 'install-agent.sh'));
      fs.cpSync(path.join(root, 'reporter/lib'), path.join(agentDir, 'lib'), { recursive: true });
      fs.writeFileSync(path.join(agentDir, 'host-agent.sh'), current);
      server = await startServer({ config: { agentAllowHttp: true }, hosts: { agentDir, keptAgentsDir: path.join(agentDir, 'kept') } });
    }

    /** Ships `script` as the new current version; the installed one is kept for hosts not yet upgraded. */
    function ship(script: string) {
      fs.mkdirSync(path.join(agentDir, 'kept', agentVersion), { recursive: true });
      fs.writeFileSync(path.join(agentDir, 'kept', agentVersion, 'host-agent.sh'), current);
      fs.writeFileSync(path.join(agentDir, 'host-agent.sh'), script);
    }

    async function installedHost() {
      expect((await install(await enrollmentToken())).exitCode).toBe(0);
      expect((await agentOnce()).exitCode).toBe(0);
      return (await server.client.get('/api/hosts')).body[0];
    }

    async function until(condition: () => Promise<boolean> | boolean, ms: number) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        if (await condition()) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`condition not met within ${ms} ms`);
    }

    it('an upgrade offered by the server is verified, installed and accepted after the new version heartbeats', async () => {
      await serverWithReleases();
      const host = await installedHost();
      const next = current.replace(/^HOMEFLEET_AGENT_VERSION=.*$/m, 'HOMEFLEET_AGENT_VERSION="99.0.0"');
      ship(next);
      const requested = await server.client.post(`/api/hosts/${host.id}/upgrade`, { version: '99.0.0' });
      expect(requested.status, requested.text).toBe(202);

      // The fake systemctl really runs the watchdog unit, with a bound well above this test's run.
      env.FAKE_SYSTEMCTL_ROOT = hostRoot;
      env.HOMEFLEET_UPGRADE_TIMEOUT_S = '30';
      const run = await agentOnce();
      expect(run.exitCode, run.stderr).toBe(0);
      expect(fs.readFileSync(installedAgent(), 'utf8')).toBe(next);
      expect(fs.readFileSync(installedAgent() + '.previous', 'utf8')).toBe(current);

      const after = (await server.client.get(`/api/hosts/${host.id}`)).body;
      expect(after.agent_version).toBe('99.0.0');
      expect(after.upgrade).toMatchObject({ state: 'succeeded', version: '99.0.0', from: agentVersion });
      // The watchdog stood down: the new version stays.
      await until(() => !fs.existsSync(path.join(hostRoot, 'etc/homefleet-agent/upgrade')), 5000);
      expect(fs.readFileSync(installedAgent(), 'utf8')).toBe(next);
    });

    it('going back to an older version takes an explicit rollback, which the agent then carries out', async () => {
      await serverWithReleases();
      const host = await installedHost();
      const next = current.replace(/^HOMEFLEET_AGENT_VERSION=.*$/m, 'HOMEFLEET_AGENT_VERSION="99.0.0"');
      ship(next);
      expect((await server.client.post(`/api/hosts/${host.id}/upgrade`, { version: '99.0.0' })).status).toBe(202);
      env.FAKE_SYSTEMCTL_ROOT = hostRoot;
      env.HOMEFLEET_UPGRADE_TIMEOUT_S = '30';
      expect((await agentOnce()).exitCode).toBe(0);
      await until(() => !fs.existsSync(path.join(hostRoot, 'etc/homefleet-agent/upgrade')), 5000);
      expect((await server.client.get(`/api/hosts/${host.id}`)).body).toMatchObject({ agent_version: '99.0.0', upgrade_available: false });

      const refused = await server.client.post(`/api/hosts/${host.id}/upgrade`, { version: agentVersion });
      expect(refused.status, refused.text).toBe(409);
      expect((await server.client.post(`/api/hosts/${host.id}/upgrade`, { version: agentVersion, rollback: true })).status).toBe(202);
      const run = await agentOnce();
      expect(run.exitCode, run.stderr).toBe(0);
      expect(fs.readFileSync(installedAgent(), 'utf8')).toBe(current);
      const after = (await server.client.get(`/api/hosts/${host.id}`)).body;
      expect(after).toMatchObject({ agent_version: agentVersion, upgrade: { state: 'succeeded', version: agentVersion, from: '99.0.0' }, upgrade_available: true });
    });

    it('a new version that never heartbeats is rolled back by the watchdog and the old one reports again', async () => {
      await serverWithReleases();
      const host = await installedHost();
      ship('#!/usr/bin/env bash\nHOMEFLEET_AGENT_VERSION="99.0.0"\necho "broken agent" >&2\nexit 1\n');
      expect((await server.client.post(`/api/hosts/${host.id}/upgrade`, { version: '99.0.0' })).status).toBe(202);

      env.FAKE_SYSTEMCTL_ROOT = hostRoot;
      env.HOMEFLEET_UPGRADE_TIMEOUT_S = '3';
      const run = await agentOnce();
      expect(run.stderr).toContain('broken agent');
      expect(run.exitCode).toBe(1);
      // The process that took the offer; the restarted one reports a later started_at.
      const before = (await server.client.get(`/api/hosts/${host.id}`)).body.agent_started_at;

      // The watchdog puts the previous version back and restarts the service, which heartbeats again.
      await until(() => fs.readFileSync(installedAgent(), 'utf8') === current, 8000);
      await until(async () => {
        const h = (await server.client.get(`/api/hosts/${host.id}`)).body;
        return h.agent_started_at > before && h.agent_version === agentVersion;
      }, 8000);
      const after = (await server.client.get(`/api/hosts/${host.id}`)).body;
      expect(after.status).toBe('online');
      expect(after.upgrade.state).not.toBe('succeeded');
    });
  });
});
