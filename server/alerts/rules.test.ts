// The built-in alert rules through real HTTP (heartbeats, registry, jobs, snapshots in; alerts out),
// on a hand-moved clock: each rule's condition must hold for its for_s before it fires, fires once
// per subject, and resolves when it clears. Evaluation is called by the test (the app's timer is off).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { bearer, enrolledHost, heartbeatBody, startHostServer } from '../../test/helpers/hosts.js';
import { ADMIN_PASSWORD, logIn, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { RULES, type AlertFacts } from './rules.js';

const GIB = 2 ** 30;
const clock = manualClock(Date.now());
const dbPath = tempDbPath();
let server: TestServer;
let host: { host_id: number; host_token: string };

beforeAll(async () => {
  // A database file: its jobs are seeded (and a run without config fails at once), its snapshots are on.
  server = await startHostServer({ clock, dbPath, monitoring: { alerts: { evaluateMs: 3_600_000 } } });
  host = await enrolledHost(server);
});
afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

const beat = async (overrides: Record<string, unknown> = {}) => {
  const res = await server.anonymous().post('/api/agent/heartbeat', heartbeatBody(overrides), bearer(host.host_token));
  expect(res.status, res.text).toBe(200);
};
/**
 * `seconds / 30` heartbeats, 30 s apart (the first 30 s after the last), the rules evaluated after
 * each as the app's timer would: a condition they report has held for `seconds - 30` at the end.
 */
async function keepBeating(seconds: number, overrides: Record<string, unknown> = {}) {
  for (let t = 0; t < seconds; t += 30) {
    clock.advance(30_000);
    await beat(overrides);
    server.monitoring.alerts.evaluate();
  }
}
const firing = async (rule: string) => ((await server.client.get('/api/alerts?status=firing')).body as { rule: string }[]).filter((a) => a.rule === rule);
const resolved = async (rule: string) => ((await server.client.get('/api/alerts?status=resolved')).body as { rule: string }[]).filter((a) => a.rule === rule);

describe('usage rules (host.disk, host.memory, host.cpu)', () => {
  const high = { cpu: 0.97, mem_used: 15.5 * GIB, mem_total: 16 * GIB, disk_used: 95 * GIB, disk_total: 100 * GIB };
  const low = { cpu: 0.2, mem_used: 4 * GIB, mem_total: 16 * GIB, disk_used: 50 * GIB, disk_total: 100 * GIB };

  it('fire only after the usage held for for_s (300 s, 300 s, 600 s), once each, and resolve when it drops', async () => {
    await keepBeating(300, { metrics: high });
    expect(await firing('host.disk')).toEqual([]);
    // A dip before 300 s starts the wait again: no flapping.
    await keepBeating(30, { metrics: low });
    await keepBeating(300, { metrics: high });
    expect(await firing('host.disk')).toEqual([]);
    await keepBeating(30, { metrics: high });
    expect(await firing('host.disk')).toEqual([expect.objectContaining({ severity: 'warning', value: 95, subject: { type: 'host', id: String(host.host_id), name: 'pve1' }, message: 'the root filesystem of pve1 is at 95% (at or above 90%)' })]);
    expect(await firing('host.memory')).toEqual([expect.objectContaining({ value: 96.9 })]);
    expect(await firing('host.cpu')).toEqual([]);
    await keepBeating(300, { metrics: high });
    expect(await firing('host.cpu')).toEqual([expect.objectContaining({ value: 97 })]);
    expect(await firing('host.disk')).toHaveLength(1);
    await keepBeating(30, { metrics: low });
    for (const rule of ['host.disk', 'host.memory', 'host.cpu']) {
      expect(await firing(rule)).toEqual([]);
      expect(await resolved(rule)).toEqual([expect.objectContaining({ status: 'resolved', resolved_at: new Date(clock.now()).toISOString() })]);
    }
  });
});

describe('guest.down', () => {
  it('fires for a guest whose instance is deployed and that is not running for 120 s; not for one that is not deployed', async () => {
    expect((await server.client.post('/api/instances', buildInstance({ vmid: 301, name: 'web', state: 'deployed' }))).status).toBe(201);
    expect((await server.client.post('/api/instances', buildInstance({ vmid: 302, name: 'lab', state: 'testing' }))).status).toBe(201);
    const guests = (web: string) => [
      { vmid: 301, name: 'web', type: 'qemu', status: web },
      { vmid: 302, name: 'lab', type: 'lxc', status: 'stopped' },
    ];
    await keepBeating(120, { guests: guests('stopped') });
    expect(await firing('guest.down')).toEqual([]);
    await keepBeating(30, { guests: guests('stopped') });
    expect(await firing('guest.down')).toEqual([expect.objectContaining({ subject: { type: 'guest', id: `${host.host_id}/301`, name: 'web' } })]);
    await keepBeating(30, { guests: guests('running') });
    expect(await firing('guest.down')).toEqual([]);
    expect(await resolved('guest.down')).toHaveLength(1);
  });

  it('an evaluation reads of the registry only the instances of guests that are down, never its whole list', async () => {
    // policy.failed reads the whole list, at most once a minute (server/fleet/fleet.test.ts): off here.
    expect((await server.client.put('/api/alerts/rules/policy.failed', { enabled: false })).status).toBe(200);
    const list = vi.spyOn(server.instances, 'list');
    const byVmids = vi.spyOn(server.instances, 'byVmids');
    try {
      await keepBeating(30, { guests: [{ vmid: 301, name: 'web', type: 'qemu', status: 'running' }] });
      expect(byVmids).not.toHaveBeenCalled();
      await keepBeating(30, { guests: [{ vmid: 301, name: 'web', type: 'qemu', status: 'stopped' }, { vmid: 303, name: 'new', type: 'lxc', status: 'running' }] });
      expect(byVmids.mock.calls.at(-1)).toEqual([[301]]);
      expect(list).not.toHaveBeenCalled();
    } finally {
      list.mockRestore();
      byVmids.mockRestore();
      await server.client.put('/api/alerts/rules/policy.failed', { enabled: true });
    }
  });
});

describe('agent.outdated, host.offline', () => {
  it('agent.outdated after 24 h on an older agent; host.offline after 3 intervals of silence', async () => {
    await keepBeating(30, { agent_version: '0.9.0' });
    clock.advance(89_000);
    server.monitoring.alerts.evaluate();
    expect(await firing('host.offline')).toEqual([]);
    clock.advance(1_000);
    server.monitoring.alerts.evaluate();
    expect(await firing('host.offline')).toEqual([expect.objectContaining({ severity: 'critical', value: 90 })]);
    expect(await firing('agent.outdated')).toEqual([]);
    clock.advance(86_400_000);
    server.monitoring.alerts.evaluate();
    // A day later the browser's session has expired (12 h at most).
    await logIn(server.client, 'admin', ADMIN_PASSWORD);
    expect(await firing('agent.outdated')).toEqual([expect.objectContaining({ severity: 'info', message: 'pve1 runs agent 0.9.0, older than the one this server ships' })]);
    expect(await firing('host.offline')).toHaveLength(1);
    await keepBeating(30, { agent_version: '1.0.0' });
    expect(await firing('agent.outdated')).toEqual([]);
    expect(await firing('host.offline')).toEqual([]);
  });
});

describe('host.offline names what it affects', () => {
  it('the first 20 guests by vmid, the rest counted, templates left out', async () => {
    const guests = [
      { vmid: 100, name: 'debian-12', type: 'qemu', status: 'stopped', template: true },
      ...Array.from({ length: 25 }, (_, i) => ({ vmid: 300 + i, name: i === 0 ? '' : `g${i}`, type: 'lxc', status: 'running' })),
    ];
    await keepBeating(30, { guests });
    clock.advance(90_000);
    server.monitoring.alerts.evaluate();
    const named = ['300', ...Array.from({ length: 19 }, (_, i) => `${301 + i} “g${i + 1}”`)].join(', ');
    expect((await firing('host.offline')).map((a) => (a as unknown as { message: string }).message)).toEqual([
      `pve1 has sent no heartbeat for 90 s; it affects 25 guests: ${named} and 5 more`,
    ]);
    await keepBeating(30);
    expect(await firing('host.offline')).toEqual([]);
  });
});

describe('job.failed and snapshot.failed', () => {
  it('fire at once when a run ends in error or a snapshot fails, and resolve when the next one succeeds', async () => {
    const jobs = (await server.client.get('/api/jobs')).body as { id: number; key: string }[];
    const job = jobs.find((j) => j.key === 'tailscale_sync')!;
    expect((await server.client.post(`/api/jobs/${job.id}/run`)).status).toBe(500);
    server.monitoring.alerts.evaluate();
    expect(await firing('job.failed')).toEqual([expect.objectContaining({ subject: { type: 'job', id: 'tailscale_sync', name: expect.any(String) }, message: expect.stringMatching(/^the last run of tailscale_sync failed: /) })]);

    // A file where the snapshots folder belongs: the snapshot cannot be written.
    const folder = path.join(path.dirname(dbPath), 'snapshots');
    fs.rmSync(folder, { recursive: true, force: true });
    fs.writeFileSync(folder, '');
    expect((await server.client.post('/api/snapshots')).status).toBe(500);
    server.monitoring.alerts.evaluate();
    expect(await firing('snapshot.failed')).toEqual([expect.objectContaining({ subject: { type: 'snapshot', id: 'database', name: 'database snapshots' } })]);
    fs.rmSync(folder);
    expect((await server.client.post('/api/snapshots')).status).toBe(201);
    server.monitoring.alerts.evaluate();
    expect(await firing('snapshot.failed')).toEqual([]);
  });

  it('a disabled rule fires nothing, and resolves what it had fired', async () => {
    expect((await server.client.put('/api/alerts/rules/job.failed', { enabled: false })).status).toBe(200);
    expect(await firing('job.failed')).toEqual([]);
    expect(await resolved('job.failed')).toHaveLength(1);
  });
});

describe('tls.expiry', () => {
  // The certificate is fixed when the server starts: the rule itself is checked here, its route above.
  const facts = (notAfter: number | null) => ({ certificate: () => (notAfter === null ? null : { notAfter }) }) as unknown as AlertFacts;
  const settings = { enabled: true, severity: 'warning' as const, for_s: 0, days: 14 };
  const now = Date.parse('2026-11-22T12:00:00Z');

  it('holds when the served certificate expires within `days`, and says when', () => {
    expect(RULES['tls.expiry'].evaluate(facts(null), settings, now)).toEqual([]);
    expect(RULES['tls.expiry'].evaluate(facts(now + 15 * 86_400_000), settings, now)).toEqual([]);
    expect(RULES['tls.expiry'].evaluate(facts(now + 10 * 86_400_000), settings, now)).toEqual([
      { subject: { type: 'certificate', id: 'server', name: 'HTTPS certificate' }, value: 10, message: "the server's HTTPS certificate expires in 10 days (2026-12-02T12:00:00.000Z)" },
    ]);
    expect(RULES['tls.expiry'].evaluate(facts(now - 2 * 86_400_000), settings, now)[0]!.message).toMatch(/expired 2 days ago/);
  });
});
