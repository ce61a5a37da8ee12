import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { insertUsageFixture } from '../../test/fixtures/usage-reports.mjs';
import { ADMIN_PASSWORD, logIn, startServer, type TestServer } from '../../test/helpers/server.js';
import { loadConfig } from '../config.js';
import { createUsageRetention } from './retention.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});
async function start(...args: Parameters<typeof startServer>) {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
const ingest = (server: TestServer, path: string, body: unknown) => server.anonymous().post(`/api/usage${path}`, body, { origin: '' });
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const start_ = (n: number, nsapp: string) => ({ type: 'lxc', nsapp, status: 'installing', random_id: id(n) });

describe('GET /api/usage/stats', () => {
  it('counts installs per day by final status, with installs still running after an hour counted as stuck', async () => {
    const clock = manualClock(Date.parse('2026-11-20T10:00:00.000Z'));
    const server = await start({ clock });
    await ingest(server, '/upload', start_(1, 'jellyfin'));
    await ingest(server, '/upload', start_(2, 'jellyfin'));
    await ingest(server, '/upload/updatestatus', { random_id: id(1), status: 'done', error: '' });
    await ingest(server, '/upload/updatestatus', { random_id: id(2), status: 'failed', error: 'No space left on device' });
    await ingest(server, '/upload', start_(3, 'pihole')); // never finishes
    clock.advance(86_400_000);
    await ingest(server, '/upload', start_(4, 'pihole'));
    await ingest(server, '/upload/updatestatus', { random_id: id(4), status: 'failed', error: 'No space left on device' });
    await ingest(server, '/upload', start_(5, 'pihole')); // started just now: still installing
    await ingest(server, '/upload', start_(6, 'jellyfin'));
    await ingest(server, '/upload/updatestatus', { random_id: id(6), status: 'done', error: '' });

    await logIn(server.client, 'admin', ADMIN_PASSWORD); // a day later: the morning's session has idled out
    const res = await server.client.get('/api/usage/stats?days=7');
    expect(res.status).toBe(200);
    expect(res.body.days).toEqual([
      { day: '2026-11-20', done: 1, failed: 1, stuck: 1, installing: 0 },
      { day: '2026-11-21', done: 1, failed: 1, stuck: 0, installing: 1 },
    ]);
    expect(res.body.apps).toEqual([
      { nsapp: 'jellyfin', total: 3, done: 2, failed: 1, failure_rate: 0.333 },
      { nsapp: 'pihole', total: 3, done: 0, failed: 1, failure_rate: 1 },
    ]);
    expect(res.body.errors).toEqual([{ error: 'No space left on device', count: 2 }]);
    expect(res.body.retention).toEqual({ max_age_days: 180, max_reports: 100_000 });
    expect((await server.client.get('/api/usage/stats?days=0')).status).toBe(400);
    expect((await server.client.get('/api/usage/stats?days=x')).status).toBe(400);
  });

  it('is readable by a viewer (content.read), like the summary', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer');
    expect((await viewer.get('/api/usage/stats')).status).toBe(200);
    expect((await viewer.get('/api/usage')).status).toBe(403);
    expect(server.routes.find((r) => r.path === '/api/usage/stats')?.access).toBe('content.read');
  });

  it('aggregates a 90-day fixture of a few thousand reports', async () => {
    const clock = manualClock();
    const server = await start({ clock });
    insertUsageFixture(server.db, clock.now(), 4_000, 90);
    const res = await server.client.get('/api/usage/stats?days=90');
    const total = res.body.days.reduce((n: number, d: { done: number; failed: number; stuck: number; installing: number }) => n + d.done + d.failed + d.stuck + d.installing, 0);
    expect(total).toBe(4_000);
    expect(res.body.days.length).toBeGreaterThan(80);
    expect(res.body.apps[0].nsapp).toBe('homeassistant');
    expect(res.body.errors.length).toBeGreaterThan(3);
  });
});

describe('usage retention', () => {
  it('deletes reports older than the retention age at start and then on its interval', async () => {
    const clock = manualClock();
    const server = await start({ clock, config: { usageRetentionDays: 30 }, usageRetention: { intervalMs: 50 } });
    insertUsageFixture(server.db, clock.now(), 600, 60);
    const count = () => (server.db.prepare('SELECT count(*) AS n FROM usage_reports').get() as { n: number }).n;
    const oldest = () => (server.db.prepare('SELECT min(created_at) AS at FROM usage_reports').get() as { at: string }).at;
    expect(count()).toBe(600);
    await new Promise((r) => setTimeout(r, 200));
    expect(count()).toBeLessThan(600);
    expect(Date.parse(oldest())).toBeGreaterThanOrEqual(clock.now() - 30 * 86_400_000);
    const summary = await server.client.get('/api/usage/summary');
    expect(summary.body.retention).toEqual({ max_age_days: 30, max_reports: 100_000 });
  });

  it('keeps only the newest reports beyond the row cap, on start', async () => {
    const clock = manualClock();
    const first = await start({ clock, dbPath: ':memory:' });
    insertUsageFixture(first.db, clock.now(), 500, 10);
    const newest = first.db.prepare('SELECT id FROM usage_reports ORDER BY id DESC LIMIT 100').pluck().all();
    const retention = (await import('./retention.js')).createUsageRetention({ ...first.context, config: { ...first.context.config, usageMaxReports: 100 } });
    expect(retention.run()).toBe(400);
    expect(first.db.prepare('SELECT id FROM usage_reports ORDER BY id DESC').pluck().all()).toEqual(newest);
  });

  it('reads FLEET_USAGE_RETENTION_DAYS and FLEET_USAGE_MAX_REPORTS, refusing bad values', () => {
    expect(loadConfig({})).toMatchObject({ usageRetentionDays: 180, usageMaxReports: 100_000 });
    expect(loadConfig({ FLEET_USAGE_RETENTION_DAYS: '30', FLEET_USAGE_MAX_REPORTS: '5000' })).toMatchObject({ usageRetentionDays: 30, usageMaxReports: 5000 });
    expect(() => loadConfig({ FLEET_USAGE_RETENTION_DAYS: '0' })).toThrow(/FLEET_USAGE_RETENTION_DAYS/);
    expect(() => loadConfig({ FLEET_USAGE_MAX_REPORTS: 'lots' })).toThrow(/FLEET_USAGE_MAX_REPORTS/);
  });
});
