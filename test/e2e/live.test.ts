import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUsageFixture } from '../fixtures/usage-reports.mjs';
import { startMockRemote, type MockRemote } from '../helpers/remote.js';
import { renderedVmids, seedInstances, signIn, startDashboard, type Dashboard } from './helpers.js';

describe('live dashboard in Chromium', () => {
  let dash: Dashboard;
  let remote: MockRemote;
  const held: Array<() => void> = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-e2e-live-'));
  beforeAll(async () => {
    // The Tailscale mock holds each answer until the test releases it, so the run is seen running.
    remote = await startMockRemote((_req, res) => {
      held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ devices: [] })));
    });
    dash = await startDashboard({ dbPath: path.join(dir, 'live.db'), liveEvents: { keepAliveMs: 1_000, recheckMs: 1_000 } });
    await seedInstances(dash.server, [
      { vmid: 701, name: 'alpha', state: 'deployed', stack: 'development' },
      { vmid: 702, name: 'bravo', state: 'testing', stack: 'development' },
    ]);
  });
  afterAll(async () => {
    held.splice(0).forEach((release) => release());
    await dash?.stop();
    await remote?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('changes made through the API appear in an open instances page without a reload', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances');
    await expect.poll(() => renderedVmids(page)).toEqual([701, 702]);
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    expect((await dash.server.client.put('/api/instances/702', { name: 'bravo-renamed', state: 'degraded' })).status).toBe(200);
    const row = page.locator('tr[data-vmid="702"]');
    await expect.poll(() => row.locator('.col-name').textContent()).toBe('bravo-renamed');
    expect(await row.getAttribute('class')).toContain('flash');
    expect(await row.locator('.badge').textContent()).toBe('degraded');

    expect((await dash.server.client.post('/api/instances', { vmid: 703, name: 'charlie', state: 'deployed', stack: 'development' })).status).toBe(201);
    await expect.poll(() => renderedVmids(page)).toEqual([701, 702, 703]);
    expect((await dash.server.client.delete('/api/instances/701')).status).toBe(204);
    await expect.poll(() => renderedVmids(page)).toEqual([702, 703]);
    await expect.poll(() => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // An open detail page says when its instance is deleted.
    await page.goto('/instances/703');
    await expect.poll(() => page.locator('h1').textContent()).toBe('charlie');
    expect((await dash.server.client.delete('/api/instances/703')).status).toBe(204);
    await expect.poll(() => page.getByTestId('instance-deleted').count()).toBe(1);
    expect(dash.errors).toEqual([]);
  });

  it('a page whose stream broke before any event came shows what changed meanwhile once it is back', async () => {
    expect((await dash.server.client.put('/api/instances/702', { name: 'bravo-before' })).status).toBe(200);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances');
    await expect.poll(() => page.locator('tr[data-vmid="702"] .col-name').textContent()).toBe('bravo-before');
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    // The page has no event id to resume from: the server cannot replay what it misses.
    dash.server.dropConnections();
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('reconnecting');
    // The browser tries again after 3 s by itself; the change comes before that.
    expect((await dash.server.client.put('/api/instances/702', { name: 'bravo-meanwhile' })).status).toBe(200);
    await expect.poll(() => page.getByTestId('live').textContent(), { timeout: 8_000 }).toBe('live');
    await expect.poll(() => page.locator('tr[data-vmid="702"] .col-name').textContent()).toBe('bravo-meanwhile');
    // What Chromium says of each open page's stream that was cut: nothing else went wrong.
    expect(new Set(dash.errors.splice(0))).toEqual(new Set(['Failed to load resource: net::ERR_INCOMPLETE_CHUNKED_ENCODING']));
  });

  it("an administrator's open audit page shows new entries as they are written, host actions included", async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/audit');
    await expect.poll(() => page.locator('td.what[data-action="login.success"]').count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    expect((await dash.server.client.post('/api/users', { username: 'audited-user', display_name: 'Audited', role: 'viewer' })).status).toBe(201);
    const created = await dash.server.client.post('/api/hosts/enrollment-tokens', { name: 'rack-7', expires_in_s: 600, max_uses: 1 });
    expect(created.status).toBe(201);
    const newest = page.locator('table.log tbody tr').first();
    await expect.poll(() => newest.locator('td.what').getAttribute('data-action')).toBe('enrollment_token.create');
    expect(await newest.locator('td.what').textContent()).toContain('rack-7');
    await expect.poll(() => page.locator('td.what[data-action="user.create"]', { hasText: 'audited-user' }).count()).toBe(1);
    // Each entry once, whatever the stream and the page's own reads both delivered.
    const ids = await page.locator('table.log tbody tr details pre').evaluateAll((pres) => pres.map((pre) => JSON.parse(pre.textContent!).id as number));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    await expect.poll(() => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(dash.errors).toEqual([]);
  });

  // Ten steps that each wait for the page: ~7 s alone, past 20 s beside a whole suite on 2 cores.
  it('a job run shows running, with its elapsed time, then finished, without a reload', { timeout: 45_000 }, async () => {
    const job = ((await dash.server.client.get('/api/jobs')).body as { id: number; key: string }[]).find((j) => j.key === 'tailscale_sync')!;
    expect((await dash.server.client.put(`/api/jobs/${job.id}`, { config: { api_key: 'k', api_url: remote.url } })).status).toBe(200);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', `/jobs/${job.id}`);
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    const run = dash.server.client.post(`/api/jobs/${job.id}/run`); // another person presses Run now
    await expect.poll(() => held.length).toBe(1);
    const first = page.locator('table.runs tbody tr').first();
    await expect.poll(() => first.locator('.badge').textContent()).toBe('running');
    await expect.poll(() => first.getByTestId('elapsed').textContent(), { timeout: 4_000 }).toMatch(/^[1-9]\d* s$/);

    held.shift()!();
    expect((await run).status).toBe(200);
    await expect.poll(() => first.locator('.badge').textContent()).toBe('success');
    expect(await first.textContent()).toContain('Updated 0 of 1 instances');
    await expect.poll(() => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // The jobs list shows the same live.
    await page.goto('/jobs');
    const card = page.locator('article[data-job="tailscale_sync"]');
    await expect.poll(() => card.locator('.badge').textContent()).toBe('success');
    const again = dash.server.client.post(`/api/jobs/${job.id}/run`);
    await expect.poll(() => card.locator('.badge').textContent()).toBe('running');
    await expect.poll(() => card.getByTestId('elapsed').count()).toBe(1);
    await expect.poll(() => held.length).toBe(1);
    held.shift()!();
    expect((await again).status).toBe(200);
    await expect.poll(() => card.locator('.badge').textContent()).toBe('success');
    expect(dash.errors).toEqual([]);
  });

  // The race behind a CI failure: the page's read of the job left the server before the run began and
  // reached the page after the run's event, so the page drew the older answer and no running row.
  it('a run that starts while the page is still reading the job is shown running', async () => {
    const job = ((await dash.server.client.get('/api/jobs')).body as { id: number; key: string }[]).find((j) => j.key === 'tailscale_sync')!;
    const page = await dash.newPage();
    let catchRead: ((route: Route) => void) | undefined;
    const reading = new Promise<Route>((resolve) => (catchRead = resolve));
    await page.route(`**/api/jobs/${job.id}`, (route) => {
      if (catchRead && route.request().method() === 'GET') {
        catchRead(route);
        catchRead = undefined;
      } else void route.continue();
    });
    await signIn(page, dash.server, 'viewer', `/jobs/${job.id}`);
    const route = await reading;
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    const before = await route.fetch(); // the server's answer, read before the run
    expect(((await before.json()) as { runs: { status: string }[] }).runs.some((run) => run.status === 'running')).toBe(false);

    const run = dash.server.client.post(`/api/jobs/${job.id}/run`);
    await expect.poll(() => held.length).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500)); // the run's event reaches the page first
    await route.fulfill({ response: before });
    const first = page.locator('table.runs tbody tr').first();
    await expect.poll(() => first.locator('.badge').textContent()).toBe('running');

    held.shift()!();
    expect((await run).status).toBe(200);
    await expect.poll(() => first.locator('.badge').textContent()).toBe('success');
    expect(dash.errors).toEqual([]);
  });

  it('revoking the session from another browser takes the page to sign-in with the reason', async () => {
    const page = await dash.newPage();
    const username = await signIn(page, dash.server, 'operator', '/instances');
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    const user = ((await dash.server.client.get('/api/users')).body as { id: number; username: string }[]).find((u) => u.username === username)!;
    expect((await dash.server.client.post(`/api/users/${user.id}/revoke-sessions`)).status).toBe(204);
    await page.waitForURL((url) => url.pathname === '/login', { timeout: 5_000 });
    await expect.poll(() => page.getByTestId('signed-out-reason').textContent()).toBe('You were signed out: sessions revoked by an administrator.');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/instances');
  });

  it('the usage page loads its own chunk only when opened and draws the charts on a 90-day fixture', async () => {
    insertUsageFixture(dash.server.db, Date.now(), 3_000, 90);
    const page = await dash.newPage();
    const scripts: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('.js')) scripts.push(new URL(request.url()).pathname);
    });
    await signIn(page, dash.server, 'operator', '/instances');
    const bundle = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../../dist/renderer/bundle.json'), 'utf8'));
    const usageChunk = `/assets/${bundle.lazy.Usage[0]}`;
    await expect.poll(() => page.locator('table.instances').count()).toBe(1);
    expect(scripts).not.toContain(usageChunk);

    await page.getByRole('link', { name: 'Usage' }).click();
    await expect.poll(() => page.locator('[data-testid="daily-chart"] canvas').count(), { timeout: 10_000 }).toBe(1);
    expect(scripts).toContain(usageChunk);
    await expect.poll(() => page.locator('[data-testid="apps-chart"] canvas').count()).toBe(1);
    await expect.poll(() => page.getByTestId('retention').textContent()).toContain('kept for 180 days');
    await expect.poll(() => page.locator('table.usage-reports tbody tr').count()).toBe(50);

    // A new report arrives live, and its update changes the same row (random_id links them).
    const random_id = '7d0f3c1e-5b8a-4c2d-9e6f-0a1b2c3d4e5f';
    const anon = dash.server.anonymous();
    expect((await anon.post('/api/usage/upload', { type: 'vm', nsapp: 'live-app', status: 'installing', random_id }, { origin: '' })).status).toBe(201);
    const row = page.locator(`tr[data-random-id="${random_id}"]`);
    await expect.poll(() => row.locator('.badge').textContent()).toBe('installing');
    expect((await anon.post('/api/usage/upload/updatestatus', { random_id, status: 'failed', error: 'disk full' }, { origin: '' })).status).toBe(200);
    await expect.poll(() => row.locator('.badge').textContent()).toBe('failed');
    expect(await row.textContent()).toContain('disk full');
    await expect.poll(() => page.locator(`tr[data-random-id="${random_id}"]`).count()).toBe(1);
    expect(dash.errors).toEqual([]);
  });
});
