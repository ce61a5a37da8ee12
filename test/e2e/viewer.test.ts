import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageFetch, signIn, startDashboard, type Dashboard } from './helpers.js';

const navLinks = (page: import('playwright-core').Page) => page.locator('nav[aria-label="Main"] a').allTextContents();

// Needs the access layer (roles) and the jobs branch (job routes): written to PRODUCT.md's Capabilities.
const TELEMETRY_TOKEN = 'e2e-telemetry-token-0123456789abcdef';

describe('what each role is offered, and what the server refuses', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard({ config: { telemetryToken: TELEMETRY_TOKEN } });
    await dash.server.client.post('/api/instances', { vmid: 901, name: 'seen-only', state: 'deployed', stack: 'development' });
  });
  afterAll(() => dash?.stop());

  it('a viewer sees no write controls and no admin pages (Settings holds only the file cache, read-only), and forced writes are refused with 403', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances');
    await expect.poll(() => page.locator('tr[data-vmid="901"]').count()).toBe(1);
    await expect.poll(() => navLinks(page)).toEqual(['Instances', 'Collections', 'Jobs', 'Hosts', 'Health', 'Alerts', 'Campaigns', 'Usage', 'Scripts', 'Settings']);
    await expect.poll(() => page.getByRole('link', { name: 'New instance' }).count()).toBe(0);

    await page.goto('/instances/901');
    await expect.poll(() => page.locator('.timeline li').count()).toBe(1);
    await expect.poll(() => page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    await expect.poll(() => page.getByRole('button', { name: /Delete/ }).count()).toBe(0);

    await page.goto('/jobs');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Jobs');
    // Loaded (an in-memory server has no jobs), so the absence of controls below means something.
    await page.getByText('No jobs').waitFor();
    await expect.poll(() => page.getByRole('button', { name: 'Run now' }).count()).toBe(0);
    await expect.poll(() => page.getByRole('checkbox').count()).toBe(0);

    // Settings → Files: hosts.read sees the cache; uploading, pushing and deleting are hosts.manage.
    await page.goto('/settings');
    await page.getByTestId('cache-used').waitFor();
    for (const other of ['Export', 'Database snapshots', 'Notifications', 'Server keys', 'Cloud configs']) {
      expect(await page.getByRole('heading', { name: other, exact: true }).count(), other).toBe(0);
    }
    expect(await page.getByLabel('Upload a file').count()).toBe(0);

    for (const url of ['/users', '/audit', '/telemetry', '/instances/new']) {
      await page.goto(url);
      await expect.poll(() => page.getByText('Your role cannot use this page.').isVisible(), { message: url }).toBe(true);
    }

    // The server refuses what the page does not offer.
    expect(await pageFetch(page, 'POST', '/api/instances', { vmid: 902, name: 'forced', state: 'deployed', stack: 'development' })).toEqual({
      status: 403,
      body: { error: 'forbidden' },
    });
    expect((await pageFetch(page, 'PUT', '/api/instances/901', { state: 'degraded' })).status).toBe(403);
    expect((await pageFetch(page, 'DELETE', '/api/instances/901')).status).toBe(403);
    expect((await pageFetch(page, 'GET', '/api/users')).status).toBe(403);
    expect((await pageFetch(page, 'GET', '/api/export')).status).toBe(403);
    expect((await dash.server.client.get('/api/instances/901')).body.state).toBe('deployed');
  });

  it('an operator gets write controls, telemetry and Settings → Cloud configs, but no other settings, users or audit', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/instances');
    await expect.poll(() => navLinks(page)).toEqual(['Instances', 'Collections', 'Jobs', 'Hosts', 'Health', 'Alerts', 'Campaigns', 'Usage', 'Scripts', 'Telemetry', 'Settings']);
    await expect.poll(() => page.getByRole('link', { name: 'New instance' }).count()).toBe(1);
    await page.goto('/telemetry');
    await expect.poll(() => page.getByText('No telemetry events yet').isVisible()).toBe(true);
    // What homefleet receives, said truly: events your own scripts and services post with the token.
    expect(await page.locator('main p.hint').first().textContent()).toBe(
      'JSON events that your own scripts and services post to /api/telemetry with the telemetry token (FLEET_TELEMETRY_TOKEN), shown as received. The newest 10,000 are kept.',
    );
    const sent = await dash.server.anonymous().post('/api/telemetry', { event: 'match_end', map: 'de_dust2' }, { authorization: `Bearer ${TELEMETRY_TOKEN}` });
    expect(sent.status).toBe(202);
    await page.reload();
    await expect.poll(() => page.locator('table.log tbody tr').count()).toBe(1);
    await expect.poll(() => page.locator('table.log tbody td.detail').textContent()).toBe('{"event":"match_end","map":"de_dust2"}');
    await page.goto('/settings');
    await page.getByRole('heading', { name: 'Cloud configs' }).waitFor();
    for (const other of ['Export', 'Database snapshots', 'Notifications', 'Server keys']) {
      expect(await page.getByRole('heading', { name: other, exact: true }).count(), other).toBe(0);
    }
    expect((await pageFetch(page, 'POST', '/api/import', { instances: [] })).status).toBe(403);
  });

  it('an administrator is offered every page', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/instances');
    await expect.poll(() => navLinks(page)).toEqual(['Instances', 'Collections', 'Jobs', 'Hosts', 'Health', 'Alerts', 'Campaigns', 'Usage', 'Scripts', 'Telemetry', 'Settings', 'Users', 'Audit']);
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors).toEqual([]);
  });
});
