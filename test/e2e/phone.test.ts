import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDir, enroll, heartbeat } from '../helpers/hosts.js';
import { removeTempDbs, tempDbPath } from '../helpers/tempdb.js';
import { seedInstances, signIn, startDashboard, type Dashboard } from './helpers.js';

const PHONE = { width: 390, height: 844 };

// "Every page fits 390 px with tables scrolling inside their own box; checked in Chromium at 390×844."
describe('every page on a 390 × 844 phone', () => {
  let dash: Dashboard;
  let hostId: number;
  let jobId: number;
  let collectionId: number;
  beforeAll(async () => {
    // A database file (jobs and snapshots exist), agents over loopback HTTP (a host with guests and drift).
    dash = await startDashboard({ dbPath: tempDbPath(), config: { agentAllowHttp: true }, hosts: { agentDir: agentDir('1.0.0') } });
    const all = { atlas: 1, argus: 1, semaphore: 1, patchmon: 1, tailscale: 1, andromeda: 1, hardware_acceleration: 1 };
    await seedInstances(dash.server, [
      { vmid: 9101, name: 'a-rather-long-instance-name-for-a-phone', state: 'deployed', stack: 'production', tailscale_ip: '100.64.0.1', ...all, tags: ['web', 'edge-proxy', 'monitoring.extra'] },
      { vmid: 9102, name: 'db', state: 'testing', stack: 'development' },
    ]);
    await dash.server.client.put('/api/instances/9102', { state: 'degraded', tailscale_ip: '100.64.0.2' });
    const token = (await dash.server.client.post('/api/hosts/enrollment-tokens', { name: 'phone' })).body.token as string;
    const enrolled = await enroll(dash.server.anonymous(), token, { hostname: 'pve-with-a-long-hostname.example.lan', machine_id: 'phone-machine', agent_version: '0.9.0' });
    hostId = enrolled.body.host_id;
    const guests = [
      { vmid: 9101, name: 'a-rather-long-guest-name-that-differs', type: 'qemu', status: 'running' },
      { vmid: 9103, name: 'no-instance-yet', type: 'lxc', status: 'stopped' },
    ];
    expect((await heartbeat(dash.server, enrolled.body.host_token, { hostname: 'pve-with-a-long-hostname.example.lan', agent_version: '0.9.0', guests })).status).toBe(200);
    // A job with a failed run whose result is a long sentence.
    const jobs = (await dash.server.client.get('/api/jobs')).body as { id: number; key: string }[];
    jobId = jobs.find((j) => j.key === 'patchmon_sync')!.id;
    expect((await dash.server.client.post(`/api/jobs/${jobId}/run`)).status).toBe(500);
    await dash.server.client.post('/api/users', { username: 'someone-with-a-long-username', display_name: 'Someone With A Long Display Name', role: 'operator' });
    await dash.server.client.post('/api/snapshots');
    collectionId = (await dash.server.client.post('/api/collections', { name: 'A collection with a rather long name', description: 'what it is for, in a sentence', filter: { tags: ['web'], stack: 'production' } })).body.id;
  });
  afterAll(async () => {
    await dash?.stop();
    removeTempDbs();
  });

  it('no page is wider than the screen, and the header is one row', async () => {
    const page = await dash.newPage({ viewport: PHONE });
    await signIn(page, dash.server, 'administrator', '/instances');
    const pages = [
      '/instances',
      '/instances/9101',
      '/instances/new',
      '/instances/9101/edit',
      '/collections',
      `/collections/${collectionId}`,
      '/jobs',
      `/jobs/${jobId}`,
      '/hosts',
      `/hosts/${hostId}`,
      '/usage',
      '/settings',
      '/users',
      '/audit',
      '/telemetry',
      '/tokens',
      '/password',
    ];
    const wide: string[] = [];
    const tall: string[] = [];
    for (const path of pages) {
      await page.goto(path);
      await page.locator('main h1').waitFor();
      // The page's data is in: nothing says Loading… (the event stream keeps the network busy for good).
      await expect.poll(() => page.locator('main').getByText('Loading…').count()).toBe(0);
      await page.waitForTimeout(200);
      const [width, header] = await page.evaluate(() => [document.documentElement.scrollWidth, document.querySelector('header.top')!.getBoundingClientRect().height]);
      if (width > PHONE.width) wide.push(`${path}: ${width} px`);
      if (header >= 60) tall.push(`${path}: header ${Math.round(header)} px high`);
    }
    expect(wide).toEqual([]);
    expect(tall).toEqual([]);
    expect(dash.errors).toEqual([]);
  }, 60_000);

  it('the users table shows every action on the screen, and a job run its whole result', async () => {
    const page = await dash.newPage({ viewport: PHONE });
    await signIn(page, dash.server, 'administrator', '/users');
    const row = page.locator('tr[data-user="someone-with-a-long-username"]');
    await row.waitFor();
    for (const name of ['Disable…', 'Reset password…', 'Revoke sessions…']) {
      const box = (await row.getByRole('button', { name }).boundingBox())!;
      expect(box.x + box.width, name).toBeLessThanOrEqual(PHONE.width);
    }
    await page.goto(`/jobs/${jobId}`);
    const result = page.locator('table.runs td.result').first();
    await expect.poll(() => result.textContent()).toBe('patchmon_sync is not configured: set api_url and api_token');
    const box = (await result.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
  });

  it('the Menu button opens the links and the account; a link closes it again', async () => {
    const page = await dash.newPage({ viewport: PHONE });
    await signIn(page, dash.server, 'administrator', '/instances');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect.poll(() => nav.isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await expect.poll(() => nav.isVisible()).toBe(true);
    await expect.poll(() => page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
    await nav.getByRole('link', { name: 'Hosts' }).click();
    await page.waitForURL('**/hosts');
    await expect.poll(() => nav.isVisible()).toBe(false);
    // On a wide window there is no Menu button: the links are in the header, an administrator's thirteen
    // and the account in one row; the account's links open from its name and close with Escape.
    await page.setViewportSize({ width: 1280, height: 800 });
    await expect.poll(() => nav.isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Menu' }).isVisible()).toBe(false);
    expect(await nav.getByRole('link').count()).toBe(13);
    expect(await page.evaluate(() => document.querySelector('header.top')!.getBoundingClientRect().height)).toBeLessThan(60);
    const signOut = page.getByRole('button', { name: 'Sign out' });
    expect(await signOut.isVisible()).toBe(false);
    const account = page.locator('button[aria-controls="account-links"]');
    await account.click();
    await expect.poll(() => signOut.isVisible()).toBe(true);
    expect(await account.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('Escape');
    await expect.poll(() => signOut.isVisible()).toBe(false);
    await account.click();
    await page.getByRole('link', { name: 'Sign-in security' }).click();
    await page.waitForURL('**/account');
    await expect.poll(() => signOut.isVisible()).toBe(false);
  });
});
