import path from 'node:path';
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { agentDir, bearer, enroll, heartbeatBody, heldPosts, enrolledHost, enrollmentToken, heartbeat, startHostServer, writeAgent } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';
import type { HostEvent } from '../contract/hosts.js';

const INVALID = { error: 'invalid token' };
const guests = [
  { vmid: 9101, name: 'web', type: 'qemu', status: 'running' },
  { vmid: 9102, name: 'db', type: 'lxc', status: 'stopped' },
];

let server: TestServer;
let clock: ReturnType<typeof manualClock>;
beforeEach(async () => {
  clock = manualClock();
  server = await startHostServer({ clock });
});
afterEach(() => server.stop());

describe('POST /api/agent/heartbeat', () => {
  it('stores facts and guests and answers the interval with no commands', async () => {
    const host = await enrolledHost(server);
    const events: HostEvent[] = [];
    server.context.bus.on('host.heartbeat', (e) => events.push(e));
    const res = await heartbeat(server, host.host_token, { guests, addresses: ['192.0.2.10', 'fd00::10'], uptime_s: '120.87' });
    expect(res).toMatchObject({ status: 200, body: { heartbeat_interval_s: 30, commands: [] } });
    const detail = (await server.client.get(`/api/hosts/${host.host_id}`)).body;
    expect(detail).toMatchObject({
      status: 'online',
      last_heartbeat_at: '2026-11-22T10:00:00.000Z',
      agent_version: '1.0.0',
      agent_started_at: '2026-11-22T09:00:00.000Z',
      addresses: ['192.0.2.10', 'fd00::10'],
      uptime_s: 120,
      hypervisor_version: 'pve-manager/8.2.4',
      guest_count: 2,
      drift_count: 2,
      upgrade: null,
      deletion: null,
    });
    expect(detail.guests).toEqual(guests.map((g) => ({ ...g, template: false, lock: null })));
    expect(events).toEqual([{ id: host.host_id, hostname: 'pve1', status: 'online', last_heartbeat_at: '2026-11-22T10:00:00.000Z', agent_version: '1.0.0' }]);
  });

  it('shows a host offline once three intervals pass without a heartbeat', async () => {
    const host = await enrolledHost(server);
    await heartbeat(server, host.host_token);
    clock.advance(90_000);
    expect((await server.client.get('/api/hosts')).body[0].status).toBe('online');
    clock.advance(1);
    expect((await server.client.get('/api/hosts')).body[0].status).toBe('offline');
  });

  it('announces on host.status when a host goes offline, once, and when it comes back', async () => {
    const host = await enrolledHost(server);
    await heartbeat(server, host.host_token);
    const seen: string[] = [];
    server.context.bus.on('host.status', (e) => seen.push(`${e.id}:${e.status}`));
    clock.advance(60_000);
    server.hosts.sweep();
    expect(seen).toEqual([]);
    clock.advance(30_001);
    server.hosts.sweep();
    server.hosts.sweep();
    expect(seen).toEqual([`${host.host_id}:offline`]);
    await heartbeat(server, host.host_token);
    expect(seen).toEqual([`${host.host_id}:offline`, `${host.host_id}:online`]);
  });

  it('replaces the guest list with each report', async () => {
    const host = await enrolledHost(server);
    await heartbeat(server, host.host_token, { guests });
    await heartbeat(server, host.host_token, { guests: [{ vmid: 9103, name: 'new', type: 'lxc', status: 'running' }] });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.guests).toEqual([{ vmid: 9103, name: 'new', type: 'lxc', status: 'running', template: false, lock: null }]);
  });

  it('refuses a bad body with 400 and changes nothing', async () => {
    const host = await enrolledHost(server);
    for (const bad of [{ started_at: 'yesterday' }, { guests: [{ vmid: -1, type: 'qemu' }] }, { guests: [{ vmid: 1, type: 'docker' }] }, { guests: 'none' }]) {
      const res = await heartbeat(server, host.host_token, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    const malformed = await server.anonymous().request('POST', '/api/agent/heartbeat', '{"agent_version":', bearer(host.host_token));
    expect(malformed).toMatchObject({ status: 400, body: { error: 'malformed JSON body' } });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.last_heartbeat_at).toBeNull();
  });
});

describe('deletion with a receipt', () => {
  async function deliver() {
    const host = await enrolledHost(server);
    await heartbeat(server, host.host_token);
    const del = await server.client.delete(`/api/hosts/${host.host_id}`);
    expect(del).toMatchObject({ status: 202, body: { operation_id: expect.any(String), status: 'pending' } });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body).toMatchObject({ status: 'deleting', deletion: { status: 'pending' } });
    const hb = await heartbeat(server, host.host_token);
    expect(hb.status).toBe(200);
    expect(hb.body.commands).toEqual([
      { type: 'uninstall', operation_id: del.body.operation_id, receipt_token: expect.stringMatching(/^hfr_[A-Za-z0-9_-]{43}$/) },
    ]);
    return { host, operation: del.body.operation_id as string, receipt: hb.body.commands[0].receipt_token as string };
  }

  it('delivers the uninstall command once, then the host token is revoked', async () => {
    const { host } = await deliver();
    expect(await heartbeat(server, host.host_token)).toMatchObject({ status: 401, body: INVALID });
  });

  it('the receipt marks the host deleted, and retries after the host token is gone still get 204', async () => {
    const { host, operation, receipt } = await deliver();
    clock.advance(5_000);
    const anon = server.anonymous();
    expect((await anon.post(`/api/agent/receipts/${operation}`, undefined, bearer(receipt))).status).toBe(204);
    expect((await anon.post(`/api/agent/receipts/${operation}`, undefined, bearer(receipt))).status).toBe(204);
    const detail = (await server.client.get(`/api/hosts/${host.host_id}`)).body;
    expect(detail).toMatchObject({
      status: 'deleted',
      deleted_at: '2026-11-22T10:00:05.000Z',
      deletion: { operation_id: operation, status: 'confirmed', confirmed_at: '2026-11-22T10:00:05.000Z' },
    });
    // Kept for history, and the machine may enroll again as a new host.
    expect((await server.client.get('/api/hosts')).body).toHaveLength(1);
    const again = await enroll(anon, await enrollmentToken(server), { machine_id: detail.machine_id });
    expect(again.status).toBe(201);
    expect(again.body.host_id).not.toBe(host.host_id);
  });

  it('a receipt token authorizes only the receipt of its own operation', async () => {
    const first = await deliver();
    const second = await deliver();
    const anon = server.anonymous();
    expect(await anon.post(`/api/agent/receipts/${second.operation}`, undefined, bearer(first.receipt))).toMatchObject({ status: 401, body: INVALID });
    expect(await anon.post('/api/agent/heartbeat', {}, bearer(first.receipt))).toMatchObject({ status: 401, body: INVALID });
    expect(await anon.post('/api/agent/enroll', {}, bearer(first.receipt))).toMatchObject({ status: 401, body: INVALID });
    expect((await anon.get('/api/hosts', bearer(first.receipt))).status).toBe(401);
    // A host token (even a live one) is not a receipt token.
    const live = await enrolledHost(server);
    expect(await anon.post(`/api/agent/receipts/${first.operation}`, undefined, bearer(live.host_token))).toMatchObject({ status: 401, body: INVALID });
    expect((await server.client.get('/api/hosts')).body.filter((h: { status: string }) => h.status === 'deleted')).toEqual([]);
  });

  it('a receipt token expires after 7 days', async () => {
    const { operation, receipt } = await deliver();
    clock.advance(7 * 24 * 60 * 60 * 1000);
    expect(await server.anonymous().post(`/api/agent/receipts/${operation}`, undefined, bearer(receipt))).toMatchObject({ status: 401, body: INVALID });
  });

  it('an offline host stays deleting until an administrator forces it, which revokes everything', async () => {
    const host = await enrolledHost(server);
    const del = await server.client.delete(`/api/hosts/${host.host_id}`);
    // (less than the session's 30-minute idle time, so the administrator stays signed in)
    clock.advance(20 * 60 * 1000);
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.status).toBe('deleting');
    // Asking again is the same operation.
    expect((await server.client.delete(`/api/hosts/${host.host_id}`)).body.operation_id).toBe(del.body.operation_id);
    const forced = await server.client.delete(`/api/hosts/${host.host_id}?force=true`);
    expect(forced).toMatchObject({ status: 200, body: { operation_id: del.body.operation_id, status: 'forced' } });
    expect(await heartbeat(server, host.host_token)).toMatchObject({ status: 401, body: INVALID });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body).toMatchObject({ status: 'deleted', deletion: { status: 'forced' } });
    expect((await server.client.delete(`/api/hosts/${host.host_id}`)).status).toBe(409);
  });

  it('a forced deletion after delivery voids the receipt token', async () => {
    const { host, operation, receipt } = await deliver();
    expect((await server.client.delete(`/api/hosts/${host.host_id}?force=true`)).status).toBe(200);
    expect((await server.anonymous().post(`/api/agent/receipts/${operation}`, undefined, bearer(receipt))).status).toBe(401);
  });

  it('two heartbeats racing a deletion: exactly one gets the uninstall command', async () => {
    const host = await enrolledHost(server);
    await server.client.delete(`/api/hosts/${host.host_id}`);
    const results = await heldPosts(server.baseUrl, '/api/agent/heartbeat', bearer(host.host_token), Array.from({ length: 6 }, () => heartbeatBody()));
    const uninstalls = results.filter((r) => r.status === 200 && r.body.commands.length === 1);
    expect(uninstalls).toHaveLength(1);
    expect(results.filter((r) => r.status === 200 && r.body.commands.length === 0)).toHaveLength(0);
  });
});

describe('upgrades', () => {
  let dir: string;
  beforeEach(async () => {
    await server.stop();
    dir = agentDir('1.1.0');
    const kept = path.join(dir, 'kept');
    writeAgent(path.join(kept, '1.0.0'), '1.0.0');
    server = await startHostServer({ clock, hosts: { agentDir: dir, keptAgentsDir: kept } });
  });

  async function offered() {
    const host = await enrolledHost(server, { agent_version: '1.0.0' });
    const req = await server.client.post(`/api/hosts/${host.host_id}/upgrade`, {});
    expect(req).toMatchObject({ status: 202, body: { upgrade: { state: 'pending', version: '1.1.0', from: '1.0.0' } } });
    clock.advance(1000);
    const hb = await heartbeat(server, host.host_token, { agent_version: '1.0.0', started_at: '2026-11-22T09:00:00Z' });
    expect(hb.body.commands).toEqual([{ type: 'upgrade', version: '1.1.0' }]);
    const began = '2026-11-22T10:00:01.000Z';
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.upgrade).toMatchObject({ state: 'in_progress', started_at: began });
    return host;
  }

  it('is accepted only after a heartbeat of the new version from a process started after the upgrade began', async () => {
    const host = await offered();
    clock.advance(10_000);
    // The old process keeps beating: it does not count, and the command is not repeated.
    const old = await heartbeat(server, host.host_token, { agent_version: '1.0.0', started_at: '2026-11-22T09:00:00Z' });
    expect(old.body.commands).toEqual([]);
    // Claims the new version with a start before the upgrade began: not the new process.
    await heartbeat(server, host.host_token, { agent_version: '1.1.0', started_at: '2026-11-22T10:00:00Z' });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.upgrade.state).toBe('in_progress');
    await heartbeat(server, host.host_token, { agent_version: '1.1.0', started_at: '2026-11-22T10:00:05Z' });
    const detail = (await server.client.get(`/api/hosts/${host.host_id}`)).body;
    expect(detail.agent_version).toBe('1.1.0');
    expect(detail.upgrade).toEqual({
      state: 'succeeded',
      version: '1.1.0',
      from: '1.0.0',
      requested_at: '2026-11-22T10:00:00.000Z',
      started_at: '2026-11-22T10:00:01.000Z',
      finished_at: '2026-11-22T10:00:11.000Z',
    });
  });

  it('fails when no such heartbeat comes within 5 minutes; a late one does not rescue it', async () => {
    const host = await offered();
    clock.advance(5 * 60 * 1000 + 1);
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.upgrade).toMatchObject({ state: 'failed', finished_at: '2026-11-22T10:05:01.000Z' });
    await heartbeat(server, host.host_token, { agent_version: '1.1.0', started_at: '2026-11-22T10:04:00Z' });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.upgrade.state).toBe('failed');
    const audit = (await server.client.get('/api/audit')).body.map((e: { action: string }) => e.action);
    expect(audit).toContain('host.upgrade_failed');
  });

  it('the sweep writes a timed-out upgrade down as failed, with an audit entry, without waiting for a heartbeat', async () => {
    const host = await offered();
    clock.advance(5 * 60 * 1000);
    server.hosts.sweep();
    expect(server.hosts.repo.hostById(host.host_id)!.upgrade_state).toBe('in_progress');
    clock.advance(1);
    server.hosts.sweep();
    expect(server.hosts.repo.hostById(host.host_id)!.upgrade_state).toBe('failed');
    const entries = (await server.client.get('/api/audit')).body.filter((e: { action: string }) => e.action === 'host.upgrade_failed');
    expect(entries).toHaveLength(1);
  });

  it('refuses an unknown version with 400 and the version the host already runs with 409', async () => {
    const host = await enrolledHost(server, { agent_version: '1.0.0' });
    expect((await server.client.post(`/api/hosts/${host.host_id}/upgrade`, { version: '9.9.9' })).status).toBe(400);
    expect((await server.client.post(`/api/hosts/${host.host_id}/upgrade`, { version: '1.0.0' })).status).toBe(409);
    expect((await server.client.post('/api/hosts/999/upgrade', {})).status).toBe(404);
  });
});

describe('registry drift', () => {
  it('lists guests without instance and names that differ; instances no host reports are the instances list’s host_id=none', async () => {
    expect((await server.client.post('/api/instances', buildInstance({ vmid: 9102, name: 'database' }))).status).toBe(201);
    expect((await server.client.post('/api/instances', buildInstance({ vmid: 9900, name: 'elsewhere' }))).status).toBe(201);
    const host = await enrolledHost(server);
    await heartbeat(server, host.host_token, { guests });
    const detail = (await server.client.get(`/api/hosts/${host.host_id}`)).body;
    expect(detail.drift).toEqual([
      { kind: 'guest_without_instance', vmid: 9101, guest_name: 'web', guest_type: 'qemu' },
      { kind: 'name_differs', vmid: 9102, guest_name: 'db', instance_name: 'database', instance_stack: 'development' },
    ]);
    expect((await server.client.get('/api/hosts')).body[0].drift_count).toBe(2);
    // "drift lists only what concerns this host": an instance no host reports is in one fleet-wide view.
    const nowhere = (await server.client.get('/api/instances?host_id=none')).body as { vmid: number; host: unknown }[];
    expect(nowhere.map((i) => [i.vmid, i.host])).toEqual([[9900, null]]);
    const here = (await server.client.get(`/api/instances?host_id=${host.host_id}`)).body as { vmid: number; host: unknown; guest_status: string }[];
    expect(here.map((i) => [i.vmid, i.host, i.guest_status])).toEqual([[9102, { id: host.host_id, name: 'pve1' }, 'stopped']]);
  });

  it('an operator applies items; history records agent:<hostname>', async () => {
    expect((await server.client.post('/api/instances', buildInstance({ vmid: 9102, name: 'database' }))).status).toBe(201);
    const host = await enrolledHost(server, { hostname: 'pve7' });
    await heartbeat(server, host.host_token, { guests, hostname: 'pve7' });
    const operator = await server.signIn('operator');
    const res = await operator.post(`/api/hosts/${host.host_id}/drift/apply`, { items: [{ vmid: 9101 }, { vmid: 9102 }, { vmid: 4242 }] });
    expect(res.status).toBe(200);
    expect(res.body.applied.map((i: { vmid: number }) => i.vmid)).toEqual([9101, 9102]);
    expect(res.body.skipped).toEqual([{ vmid: 4242, error: 'no drift to apply for this vmid' }]);
    expect((await server.client.get('/api/instances/9101')).body).toMatchObject({ name: 'web', state: 'deployed', stack: 'development' });
    const history = (await server.client.get('/api/instances/9102/history')).body;
    expect(history[0]).toMatchObject({ field: 'name', old_value: 'database', new_value: 'db', changed_by: 'agent:pve7' });
    expect((await server.client.get('/api/instances/9101/history')).body[0]).toMatchObject({ field: 'created', changed_by: 'agent:pve7' });
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.drift).toEqual([]);
    const viewer = await server.signIn('viewer');
    expect((await viewer.post(`/api/hosts/${host.host_id}/drift/apply`, { all: true })).status).toBe(403);
  });

  it('sync_registry applies drift on each heartbeat; off by default', async () => {
    const host = await enrolledHost(server, { hostname: 'pve8' });
    await heartbeat(server, host.host_token, { guests, hostname: 'pve8' });
    expect((await server.client.get('/api/instances')).body).toEqual([]);
    expect((await server.client.patch(`/api/hosts/${host.host_id}`, { sync_registry: true })).body.sync_registry).toBe(true);
    await heartbeat(server, host.host_token, { guests, hostname: 'pve8' });
    expect((await server.client.get('/api/instances')).body.map((i: { vmid: number; name: string }) => [i.vmid, i.name])).toEqual([
      [9102, 'db'],
      [9101, 'web'],
    ]);
    await heartbeat(server, host.host_token, { guests: [{ ...guests[0], name: 'web-2' }], hostname: 'pve8' });
    expect((await server.client.get('/api/instances/9101/history')).body[0]).toMatchObject({ new_value: 'web-2', changed_by: 'agent:pve8' });
  });
});

describe('release files', () => {
  it('serves the agent of a shipped version and 404 for others', async () => {
    const res = await server.anonymous().get('/api/agent/releases/1.0.0/host-agent.sh');
    expect(res.status).toBe(200);
    expect(res.text).toContain('HOMEFLEET_AGENT_VERSION="1.0.0"');
    expect((await server.anonymous().get('/api/agent/releases/2.0.0/host-agent.sh')).status).toBe(404);
    expect((await server.anonymous().get('/api/agent/releases/..%2F..%2Fetc/host-agent.sh')).status).toBe(404);
  });

  it('serves the installer with its own address as the default server, or a clear 404 when it is missing', async () => {
    const res = await server.anonymous().get('/install/agent.sh');
    expect(res.status).toBe(200);
    expect(res.text).toContain(`\nHOMEFLEET_SERVER_DEFAULT=${server.baseUrl}\n`);
    await server.stop();
    const dir = agentDir('1.0.0', { installer: false });
    server = await startHostServer({ clock, hosts: { agentDir: dir } });
    const missing = await server.anonymous().get('/install/agent.sh');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('install-agent.sh is missing');
    expect(fs.existsSync(path.join(dir, 'install-agent.sh'))).toBe(false);
  });
});
