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
    await expect.poll(() => page.getByText('Not run yet').isVisible()).toBe(true);

    await page.getByLabel(/Inventory endpoint URL/).fill(`${mock.url}/api/project/1/inventory/1`);
    await page.getByLabel(/API token \(not set\)/).fill('sem-secret-token');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByLabel(/API token \(set\)/).count()).toBe(1);
    expect(await page.getByLabel(/API token \(set\)/).inputValue()).toBe('');
    const stored = (await dash.server.client.get(`/api/jobs/${job.id}`)).body;
    expect(stored.config).toMatchObject({ api_token: '**REDACTED**', api_url: `${mock.url}/api/project/1/inventory/1` });
    expect(JSON.stringify(stored)).not.toContain('sem-secret-token');

    // Saving again with the token box empty keeps the stored token.
    await page.getByLabel('Schedule (minutes)').fill('30');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => (await dash.server.client.get(`/api/jobs/${job.id}`)).body.schedule).toBe(30);

    const run = page.getByRole('button', { name: /Run now|Running/ });
    await run.click();
    await expect.poll(() => run.textContent()).toBe('Running…');
    expect(await run.isDisabled()).toBe(true);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Updated' }).count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => page.locator('table.runs tbody tr').count()).toBe(1);
    expect(await page.locator('table.runs tbody tr .badge').textContent()).toBe('success');
    expect(mock.seen).toEqual(['/api/project/1/inventory/1 Bearer sem-secret-token']);
    expect((await dash.server.client.get('/api/instances/601')).body.semaphore).toBe(1);

    await page.goto('/instances/601');
    await expect.poll(() => page.locator('.timeline li[data-field="semaphore"] .who').textContent()).toBe('job:semaphore_sync');
  });

  it('a failing run shows the error and is listed as an error run', async () => {
    const job = await semaphoreJob();
    expect((await dash.server.client.put(`/api/jobs/${job.id}`, { config: { api_url: `${mock.url}/api/project/1/inventory/9` } })).status).toBe(200);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', `/jobs/${job.id}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), { timeout: 10_000 }).toMatch(/^Run failed: .*503/);
    await expect.poll(() => page.locator('table.runs tbody tr').count()).toBe(2);
    expect(await page.locator('table.runs tbody tr').first().locator('.badge').textContent()).toBe('error');
  });

  it('an operator can run jobs but is not offered their settings', async () => {
    const job = await semaphoreJob();
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/jobs');
    await expect.poll(() => page.locator('article.job').count()).toBe(3);
    expect(await page.getByRole('button', { name: 'Run now' }).count()).toBe(3);
    expect(await page.getByRole('checkbox', { name: 'Enabled' }).count()).toBe(0);
    await page.goto(`/jobs/${job.id}`);
    await expect.poll(() => page.getByText('API token').count()).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await page.locator('dl.props').textContent()).toContain('set');
  });

  it('an administrator toggles a job on the list', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/jobs');
    const card = page.locator('article[data-job="patchmon_sync"]');
    await card.getByRole('checkbox', { name: 'Enabled' }).check();
    await expect.poll(() => card.locator('.pill').textContent()).toBe('enabled');
    const jobs = (await dash.server.client.get('/api/jobs')).body as { key: string; enabled: number }[];
    expect(jobs.find((j) => j.key === 'patchmon_sync')!.enabled).toBe(1);
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors).toEqual([]);
  });
});
