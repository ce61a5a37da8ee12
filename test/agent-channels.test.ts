// Agent release channels, pins and collectors (PRODUCT.md "Release channels", "Plugins") against
// the built server in its own process, shipping three agents the way a release does: 1.1.0 as
// reporter/host-agent.sh, 1.0.0 and the pre-release 1.2.0-beta.1 under build/agents/<version>/.
// Hosts are enrolled and heartbeat through the API with their own tokens (no agent runs here; the
// real agent's upgrade along its channel is test/channels-e2e.test.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { TestClient } from './helpers/http.js';
import { packageShipping } from './helpers/shipped-agents.js';
import { until as waitUntil } from './helpers/until.js';

const SETUP_TOKEN = 'channels-setup-token-0123456789abcdef';
const PASSWORD = 'channels-test-password';
const agentScript = (version: string) => `#!/usr/bin/env bash\nset -euo pipefail\nHOMEFLEET_AGENT_VERSION="${version}"\necho "agent ${version}"\n`;
const ALL_ON = { metrics: true, configs: true, storage: true, backups: true };

let server: BuiltServer;
let packageDir: string;
let dataDir: string;
let admin: TestClient;
let operator: TestClient;
let viewer: TestClient;
let machine = 0;

async function signedIn(username: string, role: string): Promise<TestClient> {
  const created = await admin.post('/api/users', { username, display_name: username, role });
  expect(created.status, created.text).toBe(201);
  const client = new TestClient(server.url);
  await client.post('/api/auth/login', { username, password: created.body.temporary_password });
  expect((await client.post('/api/auth/password', { current_password: created.body.temporary_password, new_password: PASSWORD })).status).toBe(204);
  return client;
}

interface Host {
  id: number;
  token: string;
  name: string;
}

/** A host enrolled and heartbeating as agent `version`, with its host token. */
async function host(name: string, version = '1.0.0'): Promise<Host> {
  const token = (await admin.post('/api/hosts/enrollment-tokens', { name })).body.token as string;
  const enrolled = await admin.fresh().post('/api/agent/enroll', { hostname: name, machine_id: `channels-${++machine}`, agent_version: version }, { authorization: `Bearer ${token}` });
  expect(enrolled.status, enrolled.text).toBe(201);
  const h = { id: enrolled.body.host_id as number, token: enrolled.body.host_token as string, name };
  expect((await beat(h, version)).status).toBe(200);
  return h;
}

function beat(h: Host, version = '1.0.0') {
  const body = { agent_version: version, started_at: '2026-11-22T09:00:00Z', hostname: h.name, addresses: [], hypervisor_version: 'pve-manager/8.2.4', guests: [] };
  return admin.fresh().post('/api/agent/heartbeat', body, { authorization: `Bearer ${h.token}` });
}

const detail = async (h: Host) => (await admin.get(`/api/hosts/${h.id}`)).body;
const patch = (h: Host, body: unknown, client = admin) => client.patch(`/api/hosts/${h.id}`, body);
const upgradeCommands = async (h: Host, version = '1.0.0') => ((await beat(h, version)).body.commands as { type: string }[]).filter((c) => c.type === 'upgrade');

const until = <T>(what: string, read: () => Promise<T | undefined | false>, ms = 20_000) => waitUntil(what, read, ms, 200);

beforeAll(async () => {
  packageDir = await packageShipping({ current: agentScript('1.1.0'), kept: { '1.0.0': agentScript('1.0.0'), '1.2.0-beta.1': agentScript('1.2.0-beta.1') } });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-channels-'));
  server = await startBuiltServer(agentServerEnv(dataDir, SETUP_TOKEN), [], packageDir);
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
  operator = await signedIn('ops', 'operator');
  viewer = await signedIn('viewer', 'viewer');
}, 120_000);

afterAll(async () => {
  const stopped = await server?.stop();
  // Bad input never reaches the error handler's 500 path.
  expect(stopped?.all ?? '').not.toContain('unhandled error');
  fs.rmSync(packageDir, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('agent release channels and pins (built server)', { timeout: 60_000 }, () => {
  it('the manifest gives each shipped version its channel; a host starts on stable, unpinned, every collector on', async () => {
    const manifest = (await admin.fresh().get('/api/agent/releases/manifest.json')).body;
    expect(manifest.agents.map((a: { version: string; channel: string }) => [a.version, a.channel])).toEqual([
      ['1.1.0', 'stable'],
      ['1.2.0-beta.1', 'beta'],
      ['1.0.0', 'stable'],
    ]);
    const h = await host('pve-defaults');
    expect(await detail(h)).toMatchObject({ agent_channel: 'stable', agent_pin: null, collectors: ALL_ON, upgrade_available: true, upgrade_to: '1.1.0' });
    expect((await admin.get('/api/hosts')).body.find((x: { id: number }) => x.id === h.id)).toMatchObject({ agent_channel: 'stable', agent_pin: null, collectors: ALL_ON });
    expect((await beat(h)).body).toEqual({ heartbeat_interval_s: 30, commands: [], collectors: ALL_ON });
  });

  it('only hosts.manage changes them: operators and viewers get 403 and read them unchanged', async () => {
    const h = await host('pve-roles');
    for (const client of [operator, viewer]) {
      expect(await patch(h, { agent_channel: 'beta' }, client)).toMatchObject({ status: 403, body: { error: 'forbidden' } });
      expect(await patch(h, { collectors: { metrics: false } }, client)).toMatchObject({ status: 403 });
      expect((await client.get(`/api/hosts/${h.id}`)).body).toMatchObject({ agent_channel: 'stable', agent_pin: null, collectors: ALL_ON });
    }
    expect(await patch(h, { agent_channel: 'beta' }, admin.fresh())).toMatchObject({ status: 401 });
    const saved = await patch(h, { agent_channel: 'beta', agent_pin: '1.2.0-beta.1', collectors: { metrics: false, backups: false } });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ agent_channel: 'beta', agent_pin: '1.2.0-beta.1', collectors: { metrics: false, configs: true, storage: true, backups: false }, upgrade_available: false, upgrade_to: null });
    const entry = (await admin.get('/api/audit')).body.find((e: { action: string }) => e.action === 'host.update');
    expect(entry).toMatchObject({
      actor: 'admin',
      subject: { type: 'host', id: String(h.id), name: 'pve-roles' },
      summary: 'admin changed the settings of host pve-roles: agent_channel, agent_pin, collectors.metrics, collectors.backups',
      changes: [
        { field: 'agent_channel', before: 'stable', after: 'beta' },
        { field: 'agent_pin', before: null, after: '1.2.0-beta.1' },
        { field: 'collectors.metrics', before: true, after: false },
        { field: 'collectors.backups', before: true, after: false },
      ],
    });
  });

  it('bad input is a 400 naming the field (a pin this server does not ship names the version), and changes nothing', async () => {
    const h = await host('pve-bad');
    const cases: [unknown, string, RegExp][] = [
      [{}, 'body', /give sync_registry, agent_channel, agent_pin or collectors/],
      [{ agent_channel: 'nightly' }, 'agent_channel', /stable, beta/],
      [{ agent_channel: null }, 'agent_channel', /stable, beta/],
      [{ agent_pin: 'latest' }, 'agent_pin', /version such as 1\.2\.3/],
      [{ agent_pin: 7 }, 'agent_pin', /string/],
      [{ agent_pin: '9.9.9' }, 'agent_pin', /9\.9\.9 is not an agent version this server ships \(it ships 1\.1\.0, 1\.2\.0-beta\.1, 1\.0\.0\)/],
      [{ agent_pin: '1.2.0-beta.1' }, 'agent_pin', /beta version: set agent_channel to beta/],
      [{ collectors: { metrics: 'off' } }, 'collectors.metrics', /true or false/],
      [{ collectors: { gpu: true } }, 'collectors', /gpu/],
      [{ collectors: [] }, 'collectors', /metrics, configs, storage, backups/],
      [{ collectors: null }, 'collectors', /metrics, configs, storage, backups/],
    ];
    for (const [body, field, message] of cases) {
      const res = await patch(h, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const error = (res.body.errors as { field: string; message: string }[]).find((e) => e.field === field);
      expect(error?.message, `${JSON.stringify(body)}: ${res.text}`).toMatch(message);
    }
    for (const raw of ['[', 'null', '"beta"']) {
      expect((await admin.request('PATCH', `/api/hosts/${h.id}`, raw, { 'content-type': 'application/json' })).status).toBe(400);
    }
    expect(await patch({ ...h, id: 999_999 }, { agent_channel: 'beta' })).toMatchObject({ status: 404, body: { error: 'host not found' } });
    expect((await admin.patch('/api/hosts/not-a-number', { agent_channel: 'beta' })).status).toBe(400);
    expect(await detail(h)).toMatchObject({ agent_channel: 'stable', agent_pin: null, collectors: ALL_ON });
  });

  it('a beta host gets the pre-release agent, a stable one does not, and a pinned one is never offered an upgrade', async () => {
    const stable = await host('pve-stable');
    const beta = await host('pve-beta');
    const pinned = await host('pve-pinned');
    expect((await patch(beta, { agent_channel: 'beta' })).status).toBe(200);
    expect((await patch(pinned, { agent_pin: '1.0.0' })).status).toBe(200);

    expect(await detail(stable)).toMatchObject({ upgrade_available: true, upgrade_to: '1.1.0' });
    expect(await detail(beta)).toMatchObject({ upgrade_available: true, upgrade_to: '1.2.0-beta.1' });
    expect(await detail(pinned)).toMatchObject({ upgrade_available: false, upgrade_to: null });

    // An upgrade without a version: the newest of the host's channel.
    expect((await admin.post(`/api/hosts/${stable.id}/upgrade`, {})).status).toBe(202);
    expect((await admin.post(`/api/hosts/${beta.id}/upgrade`, {})).status).toBe(202);
    expect(await upgradeCommands(stable)).toEqual([{ type: 'upgrade', version: '1.1.0' }]);
    expect(await upgradeCommands(beta)).toEqual([{ type: 'upgrade', version: '1.2.0-beta.1' }]);

    // A stable host is never given the pre-release, even when asked by name.
    const other = await host('pve-stable-2');
    expect(await admin.post(`/api/hosts/${other.id}/upgrade`, { version: '1.2.0-beta.1' })).toMatchObject({
      status: 409,
      body: { error: '1.2.0-beta.1 is a beta version and host pve-stable-2 follows the stable channel: set its agent_channel to beta first' },
    });

    // A pinned host moves only to its pin: 409 naming it otherwise.
    expect(await admin.post(`/api/hosts/${pinned.id}/upgrade`, { version: '1.1.0' })).toMatchObject({
      status: 409,
      body: { error: 'host pve-pinned is pinned to agent 1.0.0: unpin it (agent_pin: null) before moving it to 1.1.0' },
    });
    expect(await admin.post(`/api/hosts/${pinned.id}/upgrade`, {})).toMatchObject({ status: 409, body: { error: 'host already runs that version' } });
    expect(await upgradeCommands(pinned)).toEqual([]);
    expect((await detail(pinned)).upgrade).toBeNull();
    // A host of an older version pinned to a newer one is moved there only when asked.
    const behind = await host('pve-behind', '1.0.0');
    expect((await patch(behind, { agent_pin: '1.1.0' })).body).toMatchObject({ agent_pin: '1.1.0', upgrade_available: false });
    expect(await upgradeCommands(behind)).toEqual([]);
    expect((await admin.post(`/api/hosts/${behind.id}/upgrade`, {})).status).toBe(202);
    expect(await upgradeCommands(behind)).toEqual([{ type: 'upgrade', version: '1.1.0' }]);
  });

  it('a pin saved while an upgrade to another version waits calls that upgrade off, in the same change', async () => {
    const h = await host('pve-called-off');
    expect((await admin.post(`/api/hosts/${h.id}/upgrade`, {})).status).toBe(202);
    const [op] = (await admin.get(`/api/operations?host_id=${h.id}`)).body as { id: string; type: string; status: string }[];
    expect(op).toMatchObject({ type: 'upgrade', status: 'pending' });
    expect((await patch(h, { agent_pin: '1.0.0' })).body).toMatchObject({ agent_pin: '1.0.0', upgrade: null });
    expect((await admin.get(`/api/operations/${op!.id}`)).body.status).toBe('cancelled');
    expect(await upgradeCommands(h)).toEqual([]);
    const entry = (await admin.get('/api/audit')).body.find((e: { action: string; subject: { id: string } }) => e.action === 'host.update' && e.subject.id === String(h.id));
    expect(entry).toMatchObject({ detail: { host: 'pve-called-off', agent_pin: '1.0.0', cancelled_upgrade: '1.1.0' } });
    expect(entry.summary).toBe('admin changed the settings of host pve-called-off: agent_pin; the pending upgrade to 1.1.0 was called off');
  });

  it('an upgrade campaign reads each host’s channel and pin as its wave starts: a host pinned meanwhile is skipped naming its pin', async () => {
    const first = await host('pve-wave-1');
    const second = await host('pve-wave-2');
    const res = await admin.post('/api/campaigns', { name: 'agents', target: { host_ids: [first.id, second.id] }, step: { type: 'agent.upgrade' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.targets.map((t: { status: string }) => t.status)).toEqual(['running', 'pending']);
    expect((await patch(second, { agent_pin: '1.0.0' })).status).toBe(200);
    expect(await upgradeCommands(first)).toEqual([{ type: 'upgrade', version: '1.1.0' }]);
    const fresh = { agent_version: '1.1.0', started_at: new Date(Date.now() + 1000).toISOString(), hostname: first.name, addresses: [], hypervisor_version: 'pve-manager/8.2.4', guests: [] };
    expect((await admin.fresh().post('/api/agent/heartbeat', fresh, { authorization: `Bearer ${first.token}` })).status).toBe(200);
    const done = await until('the campaign to end', async () => {
      const c = (await admin.get(`/api/campaigns/${res.body.id}`)).body;
      return c.status !== 'running' && c;
    });
    expect(done.status).toBe('succeeded');
    expect(done.targets.map((t: { name: string; status: string; reason: string | null }) => [t.name, t.status, t.reason])).toEqual([
      ['pve-wave-1', 'succeeded', null],
      ['pve-wave-2', 'skipped', 'pinned to agent 1.0.0'],
    ]);
    expect(await upgradeCommands(second)).toEqual([]);
  });

  it('automatic upgrades follow the channel and never move a pinned host', async () => {
    const stable = await host('pve-auto-stable');
    const beta = await host('pve-auto-beta');
    const pinned = await host('pve-auto-pinned');
    expect((await patch(beta, { agent_channel: 'beta' })).status).toBe(200);
    expect((await patch(pinned, { agent_pin: '1.0.0' })).status).toBe(200);
    const always = { windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '00:00' }], timezone: 'UTC', auto_upgrade: true, muted: false };
    for (const h of [pinned, stable, beta]) expect((await admin.put(`/api/hosts/${h.id}/maintenance`, always)).status).toBe(200);
    // The host sweep (every 5 s) asks for them.
    await until('the automatic upgrades', async () => (await detail(stable)).upgrade?.state === 'pending' && (await detail(beta)).upgrade?.state === 'pending');
    expect((await detail(stable)).upgrade.version).toBe('1.1.0');
    expect((await detail(beta)).upgrade.version).toBe('1.2.0-beta.1');
    // Another sweep has passed for the pinned host too (its turn comes first in each).
    await new Promise((r) => setTimeout(r, 6000));
    expect((await detail(pinned)).upgrade).toBeNull();
    expect(await upgradeCommands(pinned)).toEqual([]);
  });

  it('heartbeat answers carry the collectors as saved; PATCHes of different collectors at once all stay', async () => {
    const h = await host('pve-collectors');
    const results = await Promise.all([
      patch(h, { collectors: { metrics: false } }),
      patch(h, { collectors: { configs: false } }),
      patch(h, { collectors: { storage: false } }),
      patch(h, { agent_channel: 'beta' }),
      patch(h, { sync_registry: true }),
    ]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const collectors = { metrics: false, configs: false, storage: false, backups: true };
    expect(await detail(h)).toMatchObject({ agent_channel: 'beta', sync_registry: true, collectors });
    expect((await beat(h)).body.collectors).toEqual(collectors);
    expect((await patch(h, { collectors: { storage: true } })).status).toBe(200);
    expect((await beat(h)).body.collectors).toEqual({ ...collectors, storage: true });
  });

  it('fleet health’s agent_current follows the channel and the pin: a pinned host is current, a beta one is behind the pre-release', async () => {
    const vmids = { stable: 7101, pinned: 7102, beta: 7103 };
    const hosts: Record<string, Host> = {};
    for (const [kind, vmid] of Object.entries(vmids)) {
      hosts[kind] = await host(`pve-current-${kind}`);
      expect((await admin.post('/api/instances', { vmid, name: `current-${kind}`, state: 'deployed', stack: 'development' })).status).toBe(201);
    }
    expect((await patch(hosts.pinned!, { agent_pin: '1.0.0' })).status).toBe(200);
    expect((await patch(hosts.beta!, { agent_channel: 'beta' })).status).toBe(200);
    for (const [kind, vmid] of Object.entries(vmids)) {
      const body = { agent_version: '1.0.0', started_at: '2026-11-22T09:00:00Z', hostname: hosts[kind]!.name, addresses: [], hypervisor_version: 'pve-manager/8.2.4', guests: [{ vmid, name: `current-${kind}`, type: 'lxc', status: 'running' }] };
      expect((await admin.fresh().post('/api/agent/heartbeat', body, { authorization: `Bearer ${hosts[kind]!.token}` })).status).toBe(200);
    }
    expect((await admin.put('/api/policies', [{ scope: { stack: 'development' }, checks: { agent_current: true } }])).status).toBe(200);
    const health = (await admin.get('/api/fleet-health')).body as { instances: { vmid: number; checks: { agent_current: { result: string; reason: string } } }[] };
    const cell = (vmid: number) => health.instances.find((i) => i.vmid === vmid)?.checks.agent_current;
    expect(cell(vmids.stable)).toEqual({ result: 'fail', reason: 'its host runs agent 1.0.0; 1.1.0 is offered on its stable channel' });
    expect(cell(vmids.pinned)).toEqual({ result: 'pass', reason: 'its host runs agent 1.0.0, the version it is pinned to' });
    expect(cell(vmids.beta)).toEqual({ result: 'fail', reason: 'its host runs agent 1.0.0; 1.2.0-beta.1 is offered on its beta channel' });
  });
});
