// Fleet health in process, on a hand-moved clock: agents' backup reports in (real HTTP, host tokens),
// policies through their routes, GET /api/fleet-health and the alert rules that read it out — policy.failed
// after for_s, backup.failed, and alerts that follow dependencies (an offline host raises one alert naming
// its guests; guest.down and policy.failed of those guests neither fire nor resolve until it is back).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { bearer, enrolledHost, heartbeatBody, startHostServer } from '../../test/helpers/hosts.js';
import { ADMIN_PASSWORD, logIn, type TestServer } from '../../test/helpers/server.js';

const clock = manualClock(Date.parse('2026-11-22T10:00:00.000Z'));
const nowS = () => Math.floor(clock.now() / 1000);
let server: TestServer;
let host: { host_id: number; host_token: string };

const GUESTS = [
  { vmid: 100, name: 'web', type: 'qemu', status: 'running' },
  { vmid: 101, name: 'db', type: 'qemu', status: 'stopped' },
  { vmid: 102, name: 'cache', type: 'lxc', status: 'running' },
];

beforeAll(async () => {
  server = await startHostServer({ clock, monitoring: { alerts: { evaluateMs: 3_600_000 } } });
  host = await enrolledHost(server);
  for (const [vmid, name] of [[100, 'web'], [101, 'db'], [102, 'cache'], [103, 'gone']] as const) {
    const res = await server.client.post('/api/instances', { vmid, name, state: 'deployed', stack: 'production' });
    expect(res.status, res.text).toBe(201);
  }
});
afterAll(() => server?.stop());

const beat = async () => {
  const res = await server.anonymous().post('/api/agent/heartbeat', heartbeatBody({ guests: GUESTS }), bearer(host.host_token));
  expect(res.status, res.text).toBe(200);
};
const report = async (body: unknown) => {
  const res = await server.anonymous().post('/api/agent/backups', body, bearer(host.host_token));
  expect(res.status, res.text).toBe(204);
};
const backup = (vmid: number, hoursAgo: number, verified: 'ok' | 'failed' | null = 'ok') => ({
  vmid,
  volid: `pbs:backup/vm/${vmid}/${new Date(clock.now() - hoursAgo * 3_600_000).toISOString().slice(0, 19)}Z`,
  ctime: nowS() - hoursAgo * 3600,
  size: 1_000_000,
  storage: 'pbs',
  protected: false,
  verified,
});
const health = async (query = '') => {
  const res = await server.client.get(`/api/fleet-health${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const cells = (body: { instances: { vmid: number; checks: Record<string, { result: string; reason: string }> }[] }) =>
  Object.fromEntries(body.instances.map((i) => [i.vmid, Object.fromEntries(Object.entries(i.checks).map(([k, c]) => [k, `${c.result}: ${c.reason}`]))]));
/** Time passes: a heartbeat of pve1 every 30 s for `seconds`, the rules evaluated after each; then the browser signs in again (30 min idle). */
async function keepBeating(seconds: number) {
  for (let t = 0; t < seconds; t += 30) {
    clock.advance(30_000);
    await beat();
    server.monitoring.alerts.evaluate();
  }
  await logIn(server.client, 'admin', ADMIN_PASSWORD);
}
const alerts = async (status: 'firing' | 'resolved') => ((await server.client.get(`/api/alerts?status=${status}`)).body as { rule: string; subject: { id: string }; message: string }[]);
const firing = async (rule: string) => (await alerts('firing')).filter((a) => a.rule === rule);

describe('the default policy against reported backups and guests', () => {
  it('checks production instances for running, an enabled backup job and a backup within 26 h, failing first, each with its reason', async () => {
    await beat();
    let body = await health();
    // Nothing reported yet: the backup checks cannot be told.
    expect(cells(body)[100]).toEqual({
      running: 'pass: running',
      in_backup_job: 'unknown: its host has not reported its backup jobs',
      backed_up_within_h: 'unknown: no agent has reported backups yet',
    });
    await report({
      jobs: [
        { id: 'backup-nightly', enabled: true, schedule: '02:00', vmids: 'all', exclude: [102], storage: 'pbs' },
        { id: 'backup-old', enabled: false, schedule: 'sun 01:00', vmids: [102], exclude: [], storage: 'pbs' },
      ],
      backups: [backup(100, 5), backup(100, 29), backup(101, 72), backup(102, 1, 'failed')],
    });
    body = await health();
    expect(body.checked_at).toBe('2026-11-22T10:00:00.000Z');
    expect(cells(body)).toEqual({
      101: { running: 'fail: guest is stopped', in_backup_job: 'pass: in backup job backup-nightly (02:00)', backed_up_within_h: 'fail: last backup 3 days ago' },
      102: {
        running: 'pass: running',
        in_backup_job: 'fail: not in any enabled backup job (backup job backup-old is disabled)',
        backed_up_within_h: 'fail: no backup that passed verification (the newest failed it)',
      },
      103: { running: 'unknown: no agent reports this guest', in_backup_job: 'unknown: no agent reports this guest', backed_up_within_h: 'fail: no backup found' },
      100: { running: 'pass: running', in_backup_job: 'pass: in backup job backup-nightly (02:00)', backed_up_within_h: 'pass: last backup 5 h ago' },
    });
    expect(body.instances.map((i: { vmid: number }) => i.vmid)).toEqual([101, 102, 103, 100]);
    expect(body.instances[0]).toMatchObject({ vmid: 101, name: 'db', host: { id: host.host_id, name: 'pve1' } });
    expect(body.summary).toEqual({ running: { pass: 2, fail: 1, unknown: 1 }, in_backup_job: { pass: 2, fail: 1, unknown: 1 }, backed_up_within_h: { pass: 1, fail: 3, unknown: 0 } });
    expect((await health('?failing=true')).instances.map((i: { vmid: number }) => i.vmid)).toEqual([101, 102, 103]);
  });

  it('lists an instance’s backups newest first, one entry per volume', async () => {
    const res = await server.client.get('/api/instances/100/backups');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { ...backup(100, 5), host: { id: host.host_id, name: 'pve1' } },
      { ...backup(100, 29), host: { id: host.host_id, name: 'pve1' } },
    ]);
    expect((await server.client.get('/api/instances/4242/backups')).body).toEqual({ error: 'instance not found' });
  });

  it('keeps the newest 10 backups of a guest and one entry per volume id', async () => {
    const many = Array.from({ length: 12 }, (_, i) => backup(100, i + 1));
    await report({ jobs: [{ id: 'backup-nightly', enabled: true, schedule: '02:00', vmids: 'all', exclude: [102], storage: 'pbs' }], backups: [...many, many[0]] });
    const res = await server.client.get('/api/instances/100/backups');
    expect(res.body.map((b: { volid: string }) => b.volid)).toEqual(many.slice(0, 10).map((b) => b.volid));
  });
});

describe('policies', () => {
  it('PUT replaces the list (validated, audited as a change), and the checks follow it', async () => {
    const bad = await server.client.put('/api/policies', [{ scope: { stack: 'staging' }, checks: {} }, { scope: { collection_id: 7 }, checks: { running: true } }]);
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field)).toEqual(['0.scope', '0.checks']);
    const unknown = await server.client.put('/api/policies', [{ scope: { collection_id: 7 }, checks: { running: true } }]);
    expect([unknown.status, unknown.body]).toEqual([400, { errors: [{ field: '0.scope.collection_id', message: 'no collection has id 7' }] }]);

    const policies = [{ scope: { stack: 'production' }, checks: { running: true, agent_current: true, on_tailnet: true } }];
    const res = await server.client.put('/api/policies', policies);
    expect([res.status, res.body]).toEqual([200, policies]);
    expect((await server.client.get('/api/policies')).body).toEqual(policies);
    const entry = (await server.client.get('/api/audit?limit=5')).body.find((e: { action: string }) => e.action === 'policy.update');
    expect(entry).toMatchObject({ actor: 'admin', summary: 'admin changed the fleet-health policies', changes: [{ field: 'policies', after: policies }] });
    expect(cells(await health())[100]).toEqual({
      running: 'pass: running',
      on_tailnet: 'unknown: the Tailscale sync has never succeeded',
      agent_current: 'pass: its host runs agent 1.0.0, the newest on its stable channel',
    });
  });
});

describe('alerts that follow dependencies', () => {
  it('the checks never read the registry’s whole list again: they follow each instance created, changed, renumbered and deleted', async () => {
    await keepBeating(60);
    await health();
    const list = vi.spyOn(server.instances, 'list');
    const covered = async () => (await health()).instances.map((i: { vmid: number }) => i.vmid).sort();
    try {
      // Every 5 s for 55 s, as the app's timer would (the host, silent for less than 3 intervals, stays online).
      for (let i = 0; i < 11; i++) {
        clock.advance(5_000);
        server.monitoring.alerts.evaluate();
      }
      expect(await covered()).toEqual([100, 101, 102, 103]);
      expect((await server.client.post('/api/instances', { vmid: 104, name: 'new', state: 'deployed', stack: 'production' })).status).toBe(201);
      expect(await covered()).toEqual([100, 101, 102, 103, 104]);
      expect((await server.client.put('/api/instances/104', { vmid: 105 })).status).toBe(200);
      expect(await covered()).toEqual([100, 101, 102, 103, 105]);
      expect((await server.client.put('/api/instances/103', { stack: 'development' })).status).toBe(200);
      expect(await covered()).toEqual([100, 101, 102, 105]);
      // Production instances are not deleted: moved out of production first (and so out of the policy).
      expect((await server.client.put('/api/instances/105', { stack: 'development' })).status).toBe(200);
      expect((await server.client.put('/api/policies', [{ scope: { stack: 'production' }, checks: { running: true } }, { scope: { stack: 'development' }, checks: { running: true } }])).status).toBe(200);
      expect(await covered()).toEqual([100, 101, 102, 103, 105]);
      expect((await server.client.delete('/api/instances/105')).status).toBe(204);
      expect(await covered()).toEqual([100, 101, 102, 103]);
      expect((await server.client.put('/api/policies', [{ scope: { stack: 'production' }, checks: { running: true, in_backup_job: true, backed_up_within_h: 26 } }])).status).toBe(200);
      expect(await covered()).toEqual([100, 101, 102]);
      server.monitoring.alerts.evaluate();
      expect(list).not.toHaveBeenCalled();
      await server.client.put('/api/instances/103', { stack: 'production' });
      expect(await covered()).toEqual([100, 101, 102, 103]);
    } finally {
      list.mockRestore();
    }
    await logIn(server.client, 'admin', ADMIN_PASSWORD);
  });

  it('policy.failed after for_s with the reasons; backup.failed for a failed verification', async () => {
    const policies = [{ scope: { stack: 'production' }, checks: { running: true, in_backup_job: true } }];
    expect((await server.client.put('/api/policies', policies)).status).toBe(200);
    await report({
      jobs: [{ id: 'backup-nightly', enabled: true, schedule: '02:00', vmids: 'all', exclude: [102], storage: 'pbs' }],
      backups: [backup(100, 5), backup(102, 1, 'failed')],
    });
    server.monitoring.alerts.evaluate();
    expect(await firing('policy.failed')).toEqual([]);
    expect(await firing('backup.failed')).toEqual([
      expect.objectContaining({ subject: { type: 'backup', id: backup(102, 1).volid, name: 'backup of 102' }, message: expect.stringMatching(/^the backup pbs:backup\/vm\/102\/.* of guest 102 \(made .*\) failed verification$/) }),
    ]);
    await keepBeating(3600);
    expect((await firing('policy.failed')).map((a) => [a.subject.id, a.message])).toEqual([
      ['102', '102 “cache” fails its policy: in_backup_job: not in any enabled backup job (excluded from backup job backup-nightly)'],
      ['101', '101 “db” fails its policy: running: guest is stopped'],
    ]);
  });

  it('an offline host raises one host.offline naming its guests, holds its guests’ alerts, and resolves when it is back', async () => {
    // 101 is stopped and deployed: guest.down fires after 120 s while the host beats.
    expect(await firing('guest.down')).toHaveLength(1);
    clock.advance(91_000);
    server.monitoring.alerts.evaluate();
    expect(await firing('host.offline')).toEqual([
      expect.objectContaining({ message: 'pve1 has sent no heartbeat for 91 s; it affects 3 guests: 100 “web”, 101 “db”, 102 “cache”' }),
    ]);
    // Held: still firing, nothing new, nothing resolved for the guests of the silent host.
    clock.advance(3_600_000);
    server.monitoring.alerts.evaluate();
    await logIn(server.client, 'admin', ADMIN_PASSWORD);
    expect((await firing('policy.failed')).map((a) => a.subject.id).sort()).toEqual(['101', '102']);
    expect(await firing('guest.down')).toHaveLength(1);
    expect((await alerts('resolved')).filter((a) => a.rule !== 'host.offline' && a.rule !== 'backup.failed')).toEqual([]);
    expect(cells(await health())[101]).toEqual({ running: 'unknown: no heartbeat from its host for 62 min', in_backup_job: 'unknown: no heartbeat from its host for 62 min' });
    await beat();
    server.monitoring.alerts.evaluate();
    expect(await firing('host.offline')).toEqual([]);
    expect((await alerts('resolved')).filter((a) => a.rule === 'host.offline')).toHaveLength(1);
  });

  it('a host going silent does not fire guest.down or policy.failed for its guests', async () => {
    const quiet = await enrolledHost(server, { hostname: 'pve2' });
    expect((await server.client.post('/api/instances', { vmid: 200, name: 'mail', state: 'deployed', stack: 'production' })).status).toBe(201);
    const beat2 = (status: string) => server.anonymous().post('/api/agent/heartbeat', heartbeatBody({ hostname: 'pve2', guests: [{ vmid: 200, name: 'mail', type: 'qemu', status }] }), bearer(quiet.host_token));
    expect((await beat2('running')).status).toBe(200);
    server.monitoring.alerts.evaluate();
    // Its last heartbeat said running; then it stops beating while pve1 goes on, for two hours.
    await keepBeating(7200);
    expect((await firing('host.offline')).map((a) => a.message)).toEqual([expect.stringMatching(/^pve2 has sent no heartbeat for \d+ s; it affects 1 guest: 200 “mail”$/)]);
    expect((await firing('guest.down')).filter((a) => a.subject.id.endsWith('/200'))).toEqual([]);
    expect((await firing('policy.failed')).filter((a) => a.subject.id === '200')).toEqual([]);
    expect(cells(await health())[200]).toEqual({ running: 'unknown: no heartbeat from its host for 2 h', in_backup_job: 'unknown: no heartbeat from its host for 2 h' });
  });
});

describe('after an import', () => {
  it('reads the registry again a page per turn, never the whole list at once, and keeps a change told while it reads', async () => {
    const read = server.instances.listInPages.bind(server.instances);
    const list = vi.spyOn(server.instances, 'list');
    const pages = vi.spyOn(server.instances, 'listInPages');
    // While the pages are read, someone adds a production instance: it is not in the pages read.
    pages.mockImplementationOnce(async () => {
      const rows = await read();
      expect((await server.client.post('/api/instances', { vmid: 300, name: 'late', state: 'deployed', stack: 'production' })).status).toBe(201);
      return rows;
    });
    try {
      const many = Array.from({ length: 12_000 }, (_, i) => ({ vmid: 10_000 + i, name: `vm-${i}`, state: 'deployed', stack: i % 1000 ? 'development' : 'production' }));
      const res = await server.client.post('/api/import', { version: 3, instances: [{ vmid: 100, name: 'web', state: 'deployed', stack: 'production' }, ...many] });
      expect(res.body, res.text).toEqual({ imported: 12_001 });
      const covered = (await health()).instances.map((i: { vmid: number }) => i.vmid).sort((a: number, b: number) => a - b);
      expect(covered).toEqual([100, 300, ...many.filter((i) => i.stack === 'production').map((i) => i.vmid)]);
      expect(pages).toHaveBeenCalledTimes(1);
      expect(list).not.toHaveBeenCalled();
    } finally {
      list.mockRestore();
      pages.mockRestore();
    }
  });
});
