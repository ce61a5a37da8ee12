import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedInstances, signIn, startDashboard, type Dashboard } from './helpers.js';

/** A stand-in for Semaphore on 127.0.0.1: its inventory endpoint answers an Ansible INI inventory, slowly. */
async function startMockSemaphore() {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization ?? ''}`);
    if (req.url === '/api/project/1/inventory/9') {
      res.writeHead(503).end('maintenance');
      return;
    }
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 1, name: 'fleet', type: 'static', inventory: '[web]\nweb-frontend ansible_host=10.0.0.5\n' }));
    }, 600);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise((r) => server.close(r)) };
}

// Needs the jobs branch (and the access layer for roles): written to registry-service.md's Jobs section.
describe('jobs in Chromium', () => {
  let dash: Dashboard;
  let mock: Awaited<ReturnType<typeof startMockSemaphore>>;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-e2e-jobs-'));
  beforeAll(async () => {
    mock = await startMockSemaphore();
    // A database file, so the three sync jobs are seeded (an in-memory database has none).
    dash = await startDashboard({ dbPath: path.join(dir, 'jobs.db') });
    await seedInstances(dash.server, [
      { vmid: 601, name: 'web-frontend', state: 'deployed', stack: 'production' },
      { vmid: 602, name: 'db', state: 'deployed', stack: 'development' },
    ]);
  });
  afterAll(async () => {
    await dash?.stop();
    await mock?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const semaphoreJob = async () => ((await dash.server.client.get('/api/jobs')).body as { id: number; key: string }[]).find((j) => j.key === 'semaphore_sync')!;

  it('an administrator sets the config with a write-only token, runs the job against the mock and sees the run', async () => {
    const job = await semaphoreJob();
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/jobs');
    await expect.poll(() => page.locator('article.job').count()).toBe(3);
    await page.locator('article[data-job="semaphore_sync"] h2 a').click();
    await page.waitForURL(`**/jobs/${job.id}`);
    await page.getByText('Not run yet').waitFor();
    // Not configured: Run now is not offered; the page says what to set instead.
    await expect.poll(() => page.getByTestId('not-configured').textContent()).toContain('semaphore_sync is not configured: set api_url and api_token');
    await expect.poll(() => page.getByRole('button', { name: 'Run now' }).count()).toBe(0);

    await page.getByLabel(/Inventory endpoint URL/).fill(`${mock.url}/api/project/1/inventory/1`);
    await page.getByLabel(/API token \(not set\)/).fill('sem-secret-token');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByLabel(/API token \(set\)/).count()).toBe(1);
    // The confirmation outlives the form being re-made from what was stored.
    await expect.poll(() => page.locator('#settings').getByRole('status').textContent()).toBe('Settings saved. The job is disabled.');
    await expect.poll(() => page.getByLabel(/API token \(set\)/).inputValue()).toBe('');
    const stored = (await dash.server.client.get(`/api/jobs/${job.id}`)).body;
    expect(stored.config).toMatchObject({ api_token: '**REDACTED**', api_url: `${mock.url}/api/project/1/inventory/1` });
    expect(JSON.stringify(stored)).not.toContain('sem-secret-token');

    // Saving again with the token box empty keeps the stored token.
    await page.getByLabel('Schedule (minutes)').fill('30');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => (await dash.server.client.get(`/api/jobs/${job.id}`)).body.schedule).toBe(30);

    // Never run: the page offers a preview of the first run (a dry run) before Run now.
    expect(await page.getByRole('button', { name: 'Run now' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Preview the first run' }).click();
    const preview = page.getByTestId('run-preview');
    await expect.poll(() => preview.locator('strong').textContent(), { timeout: 10_000 }).toBe('Would update 1 of 2 instances');
    expect(await preview.locator('tbody tr').allTextContents()).toEqual(['web-frontend 601Semaphoreoffon']);
    // Nothing was written: no run, the instance as it was.
    expect((await dash.server.client.get(`/api/jobs/${job.id}`)).body.runs).toEqual([]);
    expect((await dash.server.client.get('/api/instances/601')).body.semaphore).toBe(0);
    await expect.poll(() => page.getByRole('button', { name: 'Preview changes' }).count()).toBe(1);

    const run = page.getByRole('button', { name: /Run now|Running/ });
    await run.click();
    await expect.poll(() => run.textContent()).toBe('Running…');
    await expect.poll(() => run.isDisabled()).toBe(true);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Updated' }).count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => page.locator('table.runs tbody tr').count()).toBe(1);
    await expect.poll(() => page.locator('table.runs tbody tr .badge').textContent()).toBe('success');
    expect(mock.seen).toEqual(['/api/project/1/inventory/1 Bearer sem-secret-token', '/api/project/1/inventory/1 Bearer sem-secret-token']);
    await expect.poll(() => preview.count()).toBe(0);
    expect((await dash.server.client.get('/api/instances/601')).body.semaphore).toBe(1);

    await page.goto('/instances/601');
    await expect.poll(() => page.locator('.timeline li[data-field="semaphore"] .who').textContent()).toBe('job:semaphore_sync');
  });

  it('a failing run shows the error and is listed as an error run; Run now keeps its size', async () => {
    const job = await semaphoreJob();
    // Another address: the stored token is kept only for the one it was saved with, so it is sent again.
    expect((await dash.server.client.put(`/api/jobs/${job.id}`, { config: { api_url: `${mock.url}/api/project/1/inventory/9`, api_token: 'sem-secret-token' } })).status).toBe(200);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', `/jobs/${job.id}`);
    const button = page.getByRole('button', { name: 'Run now' });
    await button.click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/^Run failed: .*503/);
    await expect.poll(() => page.locator('table.runs tbody tr').count()).toBe(2);
    await expect.poll(() => page.locator('table.runs tbody tr').first().locator('.badge').textContent()).toBe('error');
    // The button stays a button beside the longer message, not a bar as wide as it.
    const [buttonBox, alertBox] = [await button.boundingBox(), await page.getByRole('alert').boundingBox()];
    expect(buttonBox!.width).toBeLessThan(160);
    expect(alertBox!.width).toBeGreaterThan(buttonBox!.width * 2);
  });

  it('an operator can run configured jobs, is told what the others need, and is not offered settings', async () => {
    const job = await semaphoreJob();
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/jobs');
    await expect.poll(() => page.locator('article.job').count()).toBe(3);
    await expect.poll(() => page.getByRole('button', { name: 'Run now' }).count()).toBe(1);
    await expect.poll(() => page.locator('article[data-job="semaphore_sync"]').getByRole('button', { name: 'Run now' }).count()).toBe(1);
    expect(await page.locator('article[data-job="tailscale_sync"] [data-testid="not-configured"]').textContent()).toBe(
      'Not ready to run: tailscale_sync is not configured: set api_key. An administrator can configure it.',
    );
    expect(await page.locator('article[data-job="patchmon_sync"] [data-testid="not-configured"]').textContent()).toContain(
      'patchmon_sync is not configured: set api_url and api_token',
    );
    await expect.poll(() => page.getByRole('checkbox', { name: 'Enabled' }).count()).toBe(0);
    await page.goto(`/jobs/${job.id}`);
    await expect.poll(() => page.getByText('API token').count()).toBeGreaterThan(0);
    await expect.poll(() => page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    await expect.poll(() => page.locator('dl.props').textContent()).toContain('set');
  });

  it('a job that lost its config after the page loaded fails its run with the server text, job key as written', async () => {
    const job = await semaphoreJob();
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', `/jobs/${job.id}`);
    const button = page.getByRole('button', { name: 'Run now' });
    await button.waitFor();
    expect((await dash.server.client.put(`/api/jobs/${job.id}`, { config: { api_url: '' } })).status).toBe(200);
    await button.click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Run failed: semaphore_sync is not configured/);
    // The reload after the run shows the job as it now is: not configured, no Run now.
    await expect.poll(() => page.getByTestId('not-configured').count()).toBe(1);
    expect(await button.count()).toBe(0);
  });

  it('enabling a job that is not configured warns that every run will fail', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/jobs');
    const card = page.locator('article[data-job="patchmon_sync"]');
    await card.getByRole('checkbox', { name: 'Enabled' }).check();
    await expect.poll(() => card.locator('.pill').textContent()).toBe('enabled');
    expect(await card.getByRole('status').textContent()).toBe(
      'Enabled, but patchmon_sync is not configured: set api_url and api_token. It will fail on every run until it is configured.',
    );
    expect(await card.getByRole('status').getAttribute('class')).toContain('notice-warning');
    const jobs = (await dash.server.client.get('/api/jobs')).body as { key: string; enabled: number }[];
    expect(jobs.find((j) => j.key === 'patchmon_sync')!.enabled).toBe(1);
  });

  it('the settings form warns while enabled and unconfigured, keeps the notice after saving, and offers run-on-create for every job', async () => {
    const jobs = (await dash.server.client.get('/api/jobs')).body as { id: number; key: string }[];
    const tailscale = jobs.find((j) => j.key === 'tailscale_sync')!;
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', `/jobs/${tailscale.id}`);
    const settings = page.locator('#settings');
    await settings.getByRole('checkbox', { name: /Enabled/ }).check();
    await expect.poll(() => settings.locator('.notice-warning').textContent()).toBe(
      'tailscale_sync is not configured: set api_key. Enabled as it is, it will fail on every run until it is configured.',
    );
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => settings.locator('.notice-warning').first().textContent()).toBe(
      'Settings saved. The job is enabled, but tailscale_sync is not configured: set api_key; it will fail on every run until it is configured.',
    );
    // Typing the key clears the warning before saving; saving confirms and offers Run now.
    await page.getByLabel(/API key/).fill('tskey-abc');
    await expect.poll(() => settings.locator('.notice-warning').count()).toBe(1);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => settings.getByRole('status').textContent()).toBe('Settings saved. The job runs every 15 min.');
    await expect.poll(() => page.getByRole('button', { name: 'Preview the first run' }).count()).toBe(1);
    expect(await settings.locator('.notice-warning').count()).toBe(0);

    for (const job of jobs) {
      await page.goto(`/jobs/${job.id}`);
      await expect.poll(() => page.getByRole('checkbox', { name: 'Also run after an instance is created' }).count(), { message: job.key }).toBe(1);
    }
  });

  it('a new URL shows the stored token as to be entered again; saved without it, the refusal is beside the box and nothing reaches the new address', async () => {
    const job = await semaphoreJob();
    const stored = `${mock.url}/api/project/1/inventory/1`;
    expect((await dash.server.client.put(`/api/jobs/${job.id}`, { config: { api_url: stored, api_token: 'sem-secret-token' } })).status).toBe(200);
    const listener = await startMockSemaphore();
    try {
      const page = await dash.newPage();
      await signIn(page, dash.server, 'administrator', `/jobs/${job.id}`);
      await expect.poll(() => page.getByLabel(/API token \(set\)/).getAttribute('placeholder')).toBe('•••••••• (stored)');
      await page.getByLabel(/Inventory endpoint URL/).fill(`${listener.url}/api/project/1/inventory/1`);
      const token = page.getByLabel(/API token \(enter again\)/);
      await expect.poll(() => token.getAttribute('placeholder')).toBe('');
      expect(await page.locator('#config-api_token-hint').textContent()).toBe('The URL changed: enter it again. A stored secret is only sent to the address it was saved for.');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await expect.poll(() => page.locator('#config-api_token-error').textContent()).toBe('must be entered again when api_url changes');
      expect(await page.locator('#settings').getByRole('alert').textContent()).toBe('api_token must be entered again when api_url changes.');
      expect((await dash.server.client.get(`/api/jobs/${job.id}`)).body.config.api_url).toBe(stored);
      // Back to the stored address, the stored token is kept again.
      await page.getByLabel(/Inventory endpoint URL/).fill(stored);
      await expect.poll(() => page.getByLabel(/API token \(set\)/).count()).toBe(1);
      expect(listener.seen).toEqual([]);
    } finally {
      await listener.close();
    }
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors).toEqual([]);
  });
});
