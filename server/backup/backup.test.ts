import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, type ManualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';

let server: TestServer;
let clock: ManualClock;
beforeEach(async () => {
  clock = manualClock();
  server = await startServer({ dbPath: tempDbPath(), clock });
});
afterEach(async () => {
  await server.stop();
  removeTempDbs();
});

const api = () => server.client;
const instances = async () => (await api().get('/api/instances?sort=vmid')).body;
const jobs = async () => (await api().get('/api/jobs')).body;

function row(vmid: number, extra: Record<string, unknown> = {}) {
  return { vmid, name: `host-${vmid}`, state: 'deployed', stack: 'development', ...extra };
}

describe('export', () => {
  it('is a dated attachment with version 3, instances, jobs with raw secrets, and runs', async () => {
    await api().post('/api/instances', buildInstance({ vmid: 7, name: 'seven', tailscale_ip: '100.64.0.7', atlas: 1 }));
    const id = (await jobs())[0].id;
    await api().put(`/api/jobs/${id}`, { config: { api_key: 'tskey-raw' } });
    await api().post(`/api/jobs/${id}/run`);

    const res = await api().get('/api/export');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename=homefleet-backup-2026-11-22.json');
    expect(res.body).toMatchObject({
      version: 3,
      exported_at: '2026-11-22T10:00:00.000Z',
      instances: [
        {
          vmid: 7, name: 'seven', state: 'deployed', stack: 'development', tailscale_ip: '100.64.0.7', atlas: 1, argus: 0, semaphore: 0,
          patchmon: 0, tailscale: 0, andromeda: 0, hardware_acceleration: 0, created_at: '2026-11-22T10:00:00Z', updated_at: '2026-11-22T10:00:00Z',
        },
      ],
    });
    expect(res.body.jobs).toHaveLength(3);
    expect(res.body.jobs[0]).toEqual({ id, key: 'tailscale_sync', name: 'Tailscale sync', description: expect.any(String), enabled: 0, schedule: 15, config: { api_key: 'tskey-raw' } });
    expect(res.body.job_runs).toEqual([
      { id: expect.any(Number), job_id: id, started_at: '2026-11-22T10:00:00.000Z', ended_at: '2026-11-22T10:00:00.000Z', status: 'error', result: expect.stringContaining('Tailscale') },
    ]);
  });
});

describe('import', () => {
  it('export → import → export gives the same instances, jobs and runs', async () => {
    for (const vmid of [3, 1, 2]) await api().post('/api/instances', buildInstance({ vmid, name: `n${vmid}`, hardware_acceleration: 1 }));
    clock.advance(5_000);
    await api().put('/api/instances/2', { state: 'degraded' });
    const id = (await jobs())[1].id;
    await api().put(`/api/jobs/${id}`, { enabled: true, schedule: 90, config: { api_url: 'http://127.0.0.1:9/h', api_token: 'a:b' } });
    for (let i = 0; i < 3; i++) await api().post(`/api/jobs/${id}/run`);

    const first = (await api().get('/api/export')).body;
    clock.advance(60_000);
    const res = await api().post('/api/import', first);
    expect([res.status, res.body]).toEqual([200, { imported: 3 }]);
    const second = (await api().get('/api/export')).body;
    const withoutImported = (doc: { instance_history: Array<{ field: string }> }) => doc.instance_history.filter((h) => h.field !== 'imported');
    expect({ ...second, exported_at: null, instance_history: withoutImported(second) }).toEqual({ ...first, exported_at: null, instance_history: withoutImported(first) });
    expect(second.instance_history.filter((h: { field: string }) => h.field === 'imported')).toHaveLength(3);
  });

  it('carries every history entry (field, old, new, time, actor) into a fresh server, plus one imported entry on top', async () => {
    await api().post('/api/instances', buildInstance({ vmid: 104, name: 'nextcloud', state: 'testing' }));
    await api().post('/api/instances', buildInstance({ vmid: 7, name: 'seven' }));
    clock.advance(1_234);
    await api().put('/api/instances/104', { state: 'deployed', tailscale_ip: '100.64.0.4' });
    clock.advance(2_000);
    await api().put('/api/instances/104', { vmid: 105 });
    await api().put('/api/instances/7', { name: 'seven-b' });
    const historyOf = async (s: TestServer, vmid: number) =>
      (await s.client.get(`/api/instances/${vmid}/history`)).body.map(({ id: _id, ...entry }: { id: number }) => entry);
    const before = { 105: await historyOf(server, 105), 7: await historyOf(server, 7) };
    expect(before[105].map((h: { field: string }) => h.field)).toEqual(['vmid', 'tailscale_ip', 'state', 'created']);
    const exported = (await api().get('/api/export')).body;
    expect(exported.instance_history).toContainEqual({ vmid: 105, field: 'state', old_value: 'testing', new_value: 'deployed', changed_at: '2026-11-22T10:00:01.234Z', changed_by: expect.any(String) });

    const fresh = await startServer({ dbPath: tempDbPath(), clock: manualClock(Date.parse('2026-12-01T00:00:00Z')) });
    try {
      const res = await fresh.client.post('/api/import', exported);
      expect([res.status, res.body]).toEqual([200, { imported: 2 }]);
      for (const vmid of [105, 7] as const) {
        const after = await historyOf(fresh, vmid);
        expect(after[0]).toEqual({ vmid, field: 'imported', old_value: null, new_value: null, changed_at: '2026-12-01T00:00:00.000Z', changed_by: 'import' });
        expect(after.slice(1)).toEqual(before[vmid]);
      }
      const again = (await fresh.client.get('/api/export')).body;
      expect(again.instances).toEqual(exported.instances);
      expect(again.instance_history.filter((h: { field: string }) => h.field !== 'imported')).toEqual(exported.instance_history);
    } finally {
      await fresh.stop();
    }
  });

  it('without instance_history behaves as before: only the imported entry', async () => {
    const res = await api().post('/api/import', { version: 3, instances: [row(8)], instance_history: null });
    expect(res.status).toBe(200);
    expect((await api().get('/api/instances/8/history')).body.map((h: { field: string }) => h.field)).toEqual(['imported']);
  });

  it('a bad history entry is 400 naming the entry; nothing changes', async () => {
    await api().post('/api/instances', buildInstance({ vmid: 9, name: 'kept' }));
    const before = (await api().get('/api/export')).body;
    const good = { vmid: 1, field: 'state', old_value: 'testing', new_value: 'deployed', changed_at: '2026-11-01T00:00:00.000Z', changed_by: 'ann' };
    const cases: Array<[unknown, { field: string; message: string }]> = [
      [{ ...good, changed_at: 'yesterday' }, { field: 'instance_history[1].changed_at', message: 'instance_history[1] (vmid 1, field "state"): changed_at must be an ISO 8601 UTC timestamp' }],
      [{ ...good, vmid: 2 }, { field: 'instance_history[1].vmid', message: 'instance_history[1] (vmid 2, field "state"): vmid names no instance in this backup' }],
      [{ ...good, old_value: 5 }, { field: 'instance_history[1].old_value', message: 'instance_history[1] (vmid 1, field "state"): old_value must be a string or null' }],
      [{ ...good, field: '' }, { field: 'instance_history[1].field', message: 'instance_history[1] (vmid 1, field ""): field must not be empty' }],
      ['x', { field: 'instance_history[1]', message: 'instance_history[1]: must be a JSON object' }],
    ];
    for (const [entry, error] of cases) {
      const res = await api().post('/api/import', { version: 3, instances: [row(1)], instance_history: [good, entry] });
      expect([res.status, res.body], JSON.stringify(entry)).toEqual([400, { errors: [error] }]);
    }
    const notArray = await api().post('/api/import', { version: 3, instances: [row(1)], instance_history: {} });
    expect([notArray.status, notArray.body]).toEqual([400, { errors: [{ field: 'instance_history', message: 'must be an array' }] }]);
    expect((await api().get('/api/export')).body).toEqual({ ...before, exported_at: expect.any(String) });
  });

  it('replaces instances and their history with one "imported" entry each', async () => {
    await api().post('/api/instances', buildInstance({ vmid: 50, name: 'old' }));
    await api().put('/api/instances/50', { state: 'testing' });
    clock.advance(1_000);
    const res = await api().post('/api/import', { version: 3, instances: [row(50, { name: 'new' }), row(51)] });
    expect(res.body).toEqual({ imported: 2 });
    expect((await instances()).map((i: { name: string }) => i.name)).toEqual(['new', 'host-51']);
    for (const vmid of [50, 51]) {
      expect((await api().get(`/api/instances/${vmid}/history`)).body).toEqual([
        { id: expect.any(Number), vmid, field: 'imported', old_value: null, new_value: null, changed_at: '2026-11-22T10:00:01.000Z', changed_by: 'import' },
      ]);
    }
  });

  it('a body without an instances array is 400 and changes nothing', async () => {
    await api().post('/api/instances', buildInstance({ vmid: 9 }));
    for (const body of [{}, { instances: 'x' }, [], { version: 3, jobs: [] }]) {
      const res = await api().post('/api/import', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ errors: [{ field: 'instances', message: 'must be an array of instances' }] });
    }
    expect((await instances()).map((i: { vmid: number }) => i.vmid)).toEqual([9]);
  });

  it('one bad row among 1,000 rejects the whole import with 400 naming the row; nothing changes', async () => {
    await api().post('/api/instances', buildInstance({ vmid: 9, name: 'kept' }));
    const before = (await api().get('/api/export')).body;
    const rows = Array.from({ length: 1000 }, (_, i) => row(i + 100));
    rows[637] = row(737, { tailscale_ip: '300.1.1.1' });
    const res = await api().post('/api/import', { version: 3, instances: rows });
    expect([res.status, res.body]).toEqual([
      400,
      { errors: [{ field: 'instances[637].tailscale_ip', message: 'instances[637] (vmid 737, "host-737"): tailscale_ip must be an IPv4 address or empty' }] },
    ]);
    rows[637] = row(100);
    const dup = await api().post('/api/import', { version: 3, instances: rows });
    expect([dup.status, dup.body]).toEqual([
      400,
      { errors: [{ field: 'instances[637].vmid', message: 'instances[637] (vmid 100, "host-100"): vmid duplicates instances[0] (vmid 100, "host-100")' }] },
    ]);
    const notObject = await api().post('/api/import', { version: 3, instances: [row(1), 42] });
    expect(notObject.body).toEqual({ errors: [{ field: 'instances[1]', message: 'instances[1]: must be a JSON object' }] });
    expect((await api().get('/api/export')).body).toEqual(before);
  });

  it('rejects a bad job or run row, or a run of an unknown job, before writing anything', async () => {
    const before = (await api().get('/api/export')).body;
    const job = { id: 1, key: 'tailscale_sync', name: 'T', enabled: 1, schedule: 15, config: {} };
    const run = { id: 1, job_id: 1, started_at: '2026-11-22T10:00:00.000Z', ended_at: null, status: 'success', result: '' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ jobs: [{ ...job, schedule: 0 }] }, 'jobs[0].schedule'],
      [{ jobs: [{ ...job, key: 'nope' }] }, 'jobs[0].key'],
      [{ jobs: [{ ...job, config: { bogus: 1 } }] }, 'jobs[0].config'],
      [{ jobs: [job, { ...job, id: 2 }] }, 'jobs[1].key'],
      [{ jobs: [job], job_runs: [{ ...run, status: 'done' }] }, 'job_runs[0].status'],
      [{ jobs: [job], job_runs: [{ ...run, job_id: 2 }] }, 'job_runs[0].job_id'],
      [{ jobs: {} }, 'jobs'],
    ];
    for (const [extra, field] of cases) {
      const res = await api().post('/api/import', { version: 3, instances: [row(1)], ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.errors[0].field, JSON.stringify(extra)).toBe(field);
    }
    expect((await api().get('/api/export')).body).toEqual(before);
  });

  it('accepts version 1 (also without a version) and 2: missing flags 0, missing tailscale_ip "", jobs kept', async () => {
    const jobsBefore = await jobs();
    const old = { vmid: 5, name: 'legacy', state: 'testing', stack: 'production' };
    for (const body of [{ instances: [old] }, { version: 1, instances: [old] }, { version: 2, instances: [{ ...old, atlas: 1 }] }]) {
      const res = await api().post('/api/import', body);
      expect([res.status, res.body], JSON.stringify(body)).toEqual([200, { imported: 1 }]);
      const [imported] = await instances();
      expect(imported).toMatchObject({ ...old, tailscale_ip: '', argus: 0, semaphore: 0, patchmon: 0, tailscale: 0, andromeda: 0, hardware_acceleration: 0 });
      expect(imported.created_at).toBe('2026-11-22T10:00:00Z');
    }
    expect(await jobs()).toEqual(jobsBefore);
  });

  it('refuses a version above 3 or not an integer', async () => {
    for (const version of [4, 0, '3', 2.5]) {
      const res = await api().post('/api/import', { version, instances: [] });
      expect([res.status, res.body]).toEqual([400, { error: 'unsupported backup version' }]);
    }
  });

  it('restores jobs and runs when present, keeping the newest 10 runs per job', async () => {
    const runs = Array.from({ length: 12 }, (_, i) => ({
      id: 100 + i, job_id: 7, started_at: `2026-11-01T00:00:${String(i).padStart(2, '0')}.000Z`, ended_at: `2026-11-01T00:01:00.000Z`, status: 'success', result: `run ${i}`,
    }));
    const res = await api().post('/api/import', {
      version: 3,
      instances: [],
      jobs: [{ id: 7, key: 'semaphore_sync', name: 'Sem', description: 'd', enabled: 0, schedule: 5, config: { api_token: 'tok', api_url: 'http://127.0.0.1:9/i' } }],
      job_runs: runs,
    });
    expect(res.body).toEqual({ imported: 0 });
    const list = await jobs();
    // The built-in jobs the document lacks are seeded again, disabled (a file database always has all three).
    expect(list.map((j: { key: string }) => j.key).sort()).toEqual(['patchmon_sync', 'semaphore_sync', 'tailscale_sync']);
    expect(list.find((j: { id: number }) => j.id === 7)).toEqual(
      { id: 7, key: 'semaphore_sync', name: 'Sem', description: 'd', enabled: 0, schedule: 5, config: { api_token: '**REDACTED**', api_url: 'http://127.0.0.1:9/i' }, configured: true, missing: [], last_run_at: '2026-11-01T00:00:11.000Z', last_status: 'success', last_run_id: 111 },
    );
    const detail = (await api().get('/api/jobs/7')).body;
    expect(detail.runs.map((r: { id: number }) => r.id)).toEqual([111, 110, 109, 108, 107, 106, 105, 104, 103, 102]);
  });

  it('re-arms the scheduler: an enabled imported job whose interval has passed runs', async () => {
    const res = await api().post('/api/import', {
      instances: [],
      jobs: [{ id: 3, key: 'patchmon_sync', name: 'P', enabled: 1, schedule: 5, config: {} }],
      job_runs: [{ id: 1, job_id: 3, started_at: '2026-11-22T09:00:00.000Z', ended_at: '2026-11-22T09:00:01.000Z', status: 'success', result: 'Updated 0 of 0 instances' }],
    });
    expect(res.status).toBe(200);
    const deadline = Date.now() + 5_000;
    let detail;
    do {
      await new Promise((r) => setTimeout(r, 20));
      detail = (await api().get('/api/jobs/3')).body;
    } while (detail.runs.length < 2 && Date.now() < deadline);
    expect(detail.runs.map((r: { status: string; result: string }) => [r.status, r.result])).toEqual([
      ['error', 'patchmon_sync is not configured: set api_url and api_token'],
      ['success', 'Updated 0 of 0 instances'],
    ]);
  });

  it('emits backup.imported once the import is committed', async () => {
    const seen: number[] = [];
    server.context.bus.on('backup.imported', () => seen.push(server.db.prepare('SELECT count(*) AS n FROM instances').pluck().get() as number));
    await api().post('/api/import', { instances: [row(1), row(2)] });
    expect(seen).toEqual([2]);
  });
});
