import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { agentDir, bearer, enroll, enrolledHost, enrollmentToken, heartbeat, startHostServer, writeAgent } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// A host action and its audit entry are one write: when the entry cannot be written, the action is
// not done either (and nothing is announced), so the log never misses a change that happened.

let server: TestServer;
let clock: ReturnType<typeof manualClock>;
let announced: string[];
beforeEach(async () => {
  clock = manualClock();
  const dir = agentDir('1.1.0');
  writeAgent(path.join(dir, 'kept', '1.0.0'), '1.0.0');
  server = await startHostServer({ clock, hosts: { agentDir: dir, keptAgentsDir: path.join(dir, 'kept') } });
  announced = [];
  server.context.bus.on('host.status', (e) => announced.push(`host.status ${e.id}`));
});
afterEach(() => server.stop());

/** From now on the audit log refuses entries of `action`, as a full disk or a crash would. */
function failAudit(action: string): void {
  server.db.exec(`CREATE TRIGGER fail_audit BEFORE INSERT ON audit_log WHEN NEW.action = '${action}' BEGIN SELECT RAISE(ABORT, 'audit unavailable'); END`);
  announced.length = 0;
}
const healAudit = () => server.db.exec('DROP TRIGGER fail_audit');
const audited = (action: string) => server.db.prepare('SELECT count(*) FROM audit_log WHERE action = ?').pluck().get(action);
const detail = async (id: number) => (await server.client.get(`/api/hosts/${id}`)).body;

describe('a host action whose audit entry fails is not done', () => {
  it('enrollment_token.create: no token is made', async () => {
    failAudit('enrollment_token.create');
    expect((await server.client.post('/api/hosts/enrollment-tokens', { name: 'lost' })).status).toBe(500);
    expect((await server.client.get('/api/hosts/enrollment-tokens')).body).toEqual([]);
  });

  it('enrollment_token.revoke: the token stays usable', async () => {
    await enrollmentToken(server);
    const [token] = (await server.client.get('/api/hosts/enrollment-tokens')).body;
    failAudit('enrollment_token.revoke');
    expect((await server.client.delete(`/api/hosts/enrollment-tokens/${token.id}`)).status).toBe(500);
    expect((await server.client.get('/api/hosts/enrollment-tokens')).body[0]).toMatchObject({ id: token.id, state: 'active', revoked_at: null });
  });

  it('host.enroll: no host, and the enrollment token keeps its use', async () => {
    const token = await enrollmentToken(server);
    failAudit('host.enroll');
    expect((await enroll(server.anonymous(), token)).status).toBe(500);
    expect((await server.client.get('/api/hosts')).body).toEqual([]);
    expect((await server.client.get('/api/hosts/enrollment-tokens')).body[0]).toMatchObject({ uses: 0, state: 'active' });
    expect(announced).toEqual([]);
    healAudit();
    expect((await enroll(server.anonymous(), token)).status).toBe(201);
  });

  it('host.update: the setting is not changed', async () => {
    const host = await enrolledHost(server);
    failAudit('host.update');
    expect((await server.client.patch(`/api/hosts/${host.host_id}`, { sync_registry: true })).status).toBe(500);
    expect((await detail(host.host_id)).sync_registry).toBe(false);
  });

  it('host.revoke_token: the host token still works', async () => {
    const host = await enrolledHost(server);
    failAudit('host.revoke_token');
    expect((await server.client.post(`/api/hosts/${host.host_id}/revoke-token`)).status).toBe(500);
    expect(announced).toEqual([]);
    expect((await heartbeat(server, host.host_token)).status).toBe(200);
  });

  it('host.upgrade_request: no upgrade is pending', async () => {
    const host = await enrolledHost(server);
    failAudit('host.upgrade_request');
    expect((await server.client.post(`/api/hosts/${host.host_id}/upgrade`, {})).status).toBe(500);
    expect((await detail(host.host_id)).upgrade).toBeNull();
    expect((await heartbeat(server, host.host_token)).body.commands).toEqual([]);
  });

  it('host.delete and host.force_delete: the host stays as it was', async () => {
    const host = await enrolledHost(server);
    failAudit('host.delete');
    expect((await server.client.delete(`/api/hosts/${host.host_id}`)).status).toBe(500);
    expect(await detail(host.host_id)).toMatchObject({ status: 'offline', deletion: null });
    healAudit();
    failAudit('host.force_delete');
    expect((await server.client.delete(`/api/hosts/${host.host_id}?force=true`)).status).toBe(500);
    expect(await detail(host.host_id)).toMatchObject({ status: 'offline', deletion: null });
    expect(announced).toEqual([]);
  });

  it('host.deleted: the receipt is not taken, and its retry succeeds once the log works', async () => {
    const host = await enrolledHost(server);
    const del = await server.client.delete(`/api/hosts/${host.host_id}`);
    const receipt = (await heartbeat(server, host.host_token)).body.commands[0].receipt_token;
    failAudit('host.deleted');
    const confirm = () => server.anonymous().post(`/api/agent/receipts/${del.body.operation_id}`, undefined, bearer(receipt));
    expect((await confirm()).status).toBe(500);
    expect(await detail(host.host_id)).toMatchObject({ status: 'deleting', deletion: { status: 'delivered' } });
    expect(announced).toEqual([]);
    healAudit();
    expect((await confirm()).status).toBe(204);
    expect(await detail(host.host_id)).toMatchObject({ status: 'deleted', deletion: { status: 'confirmed' } });
    expect(audited('host.deleted')).toBe(1);
  });

  it('host.upgrade_succeeded: the heartbeat that reports it is not stored', async () => {
    const host = await enrolledHost(server, { agent_version: '1.0.0' });
    expect((await server.client.post(`/api/hosts/${host.host_id}/upgrade`, {})).status).toBe(202);
    clock.advance(1000);
    await heartbeat(server, host.host_token, { agent_version: '1.0.0' });
    clock.advance(1000);
    failAudit('host.upgrade_succeeded');
    expect((await heartbeat(server, host.host_token, { agent_version: '1.1.0', started_at: '2026-11-22T10:00:01.500Z' })).status).toBe(500);
    expect(await detail(host.host_id)).toMatchObject({ agent_version: '1.0.0', last_heartbeat_at: '2026-11-22T10:00:01.000Z', upgrade: { state: 'in_progress' } });
  });

  it('host.upgrade_failed (the sweep): the upgrade stays in progress until the entry can be written', async () => {
    const host = await enrolledHost(server, { agent_version: '1.0.0' });
    expect((await server.client.post(`/api/hosts/${host.host_id}/upgrade`, {})).status).toBe(202);
    await heartbeat(server, host.host_token, { agent_version: '1.0.0' });
    clock.advance(5 * 60 * 1000 + 1);
    failAudit('host.upgrade_failed');
    expect(() => server.hosts.sweep()).toThrow('audit unavailable');
    expect(server.hosts.repo.hostById(host.host_id)!.upgrade_state).toBe('in_progress');
    healAudit();
    server.hosts.sweep();
    expect(server.hosts.repo.hostById(host.host_id)!.upgrade_state).toBe('failed');
    expect(audited('host.upgrade_failed')).toBe(1);
  });

  it('host.drift_apply: no instance is created', async () => {
    const host = await enrolledHost(server);
    await heartbeat(server, host.host_token, { guests: [{ vmid: 9101, name: 'web', type: 'qemu', status: 'running' }] });
    failAudit('host.drift_apply');
    expect((await server.client.post(`/api/hosts/${host.host_id}/drift/apply`, { all: true })).status).toBe(500);
    expect((await server.client.get('/api/instances')).body).toEqual([]);
  });
});
