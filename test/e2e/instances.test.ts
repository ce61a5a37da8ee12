import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startMockRemote, type MockRemote } from '../helpers/remote.js';
import { removeTempDbs, tempDbPath } from '../helpers/tempdb.js';
import { pageFetch, renderedVmids, seedInstances, signIn, startDashboard, type Dashboard } from './helpers.js';

let dash: Dashboard;
beforeAll(async () => {
  dash = await startDashboard();
});
afterAll(() => dash?.stop());

describe('the instances pages in Chromium', () => {
  it('create shows the server field error beside the field, then creates; edit records the change in the timeline', async () => {
    const page = await dash.newPage();
    const who = await signIn(page, dash.server, 'administrator', '/instances');
    await expect.poll(() => page.getByText('No instances yet').isVisible()).toBe(true);
    await expect.poll(async () => (await page.getByTestId('version').textContent()) ?? '').toMatch(/^v\d+\.\d+\.\d+/);

    await page.getByRole('link', { name: 'New instance' }).click();
    await page.getByLabel('VMID').fill('4101');
    await page.getByLabel('Name').fill('web-frontend');
    await page.getByLabel('Stack').selectOption('production');
    await page.getByLabel('Tailscale IP').fill('300.1.2.3');
    await page.getByRole('button', { name: 'Create instance' }).click();
    // The message is the server's own text, shown beside the field it is about.
    await expect.poll(() => page.locator('#tailscale_ip-error').textContent()).toBe('must be an IPv4 address or empty');
    await expect.poll(() => page.getByLabel('Tailscale IP').getAttribute('aria-invalid')).toBe('true');
    expect((await dash.server.client.get('/api/instances/4101')).status).toBe(404);

    await page.getByLabel('Tailscale IP').fill('100.64.0.7');
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.waitForURL('**/instances/4101');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('web-frontend');
    await expect.poll(() => page.locator('.timeline li').count()).toBe(1);
    await expect.poll(() => page.locator('.timeline li').first().textContent()).toContain('Created');

    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('State').selectOption('testing');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL('**/instances/4101');
    await expect.poll(() => page.locator('.timeline li').count()).toBe(2);
    const change = page.locator('.timeline li[data-field="state"]');
    expect(await change.locator('.old').textContent()).toBe('deployed');
    expect(await change.locator('.new').textContent()).toBe('testing');
    expect(await change.locator('.who').textContent()).toBe(who ?? 'unknown');
    // Relative time for reading, exact UTC time for checking.
    expect(await change.locator('time').textContent()).toBe('just now');
    expect(await change.locator('.exact').textContent()).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC/);
    expect((await dash.server.client.get('/api/instances/4101')).body).toMatchObject({ state: 'testing', tailscale_ip: '100.64.0.7' });
  });

  it('a duplicate VMID shows the 409 beside the VMID field', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/instances/new');
    await page.getByLabel('VMID').fill('4101');
    await page.getByLabel('Name').fill('copy');
    await page.getByRole('button', { name: 'Create instance' }).click();
    await expect.poll(() => page.locator('#vmid-error').textContent()).toBe('is already used by another instance');
    await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('An instance with VMID 4101 already exists.');
  });

  it('a state or stack the registry does not have shows "all" in the filter, and all instances', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances?state=bogus&stack=nowhere');
    await expect.poll(() => page.getByTestId('counts').textContent()).toMatch(/^\d+ instances?/);
    expect(await page.getByLabel('State').inputValue()).toBe('');
    expect(await page.locator('#state-filter option:checked').textContent()).toBe('All states');
    expect(await page.locator('#stack-filter option:checked').textContent()).toBe('All stacks');
    expect(await page.getByTestId('counts').textContent()).not.toContain('match');
  });

  it('a row with many services ends its Services cell in an ellipsis, the full list in its title', async () => {
    const all = { atlas: 1, argus: 1, semaphore: 1, patchmon: 1, tailscale: 1, andromeda: 1, hardware_acceleration: 1 };
    await seedInstances(dash.server, [{ vmid: 4199, name: 'every-service', state: 'deployed', stack: 'development', ...all }]);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances?search=every-service');
    const flags = page.locator('tr[data-vmid="4199"] .flags');
    await expect.poll(() => flags.count()).toBe(1);
    const shape = await flags.evaluate((el) => ({
      overflow: getComputedStyle(el).textOverflow,
      clipped: el.scrollWidth > el.clientWidth,
      inside: el.getBoundingClientRect().right <= el.closest('td')!.getBoundingClientRect().right,
    }));
    expect(shape).toEqual({ overflow: 'ellipsis', clipped: true, inside: true });
    expect(await flags.getAttribute('title')).toBe('atlas, argus, semaphore, patchmon, tailscale, andromeda, hardware acceleration');
    await dash.server.client.delete('/api/instances/4199');
  });

  it('search as you type, state and stack filters and sorting are kept in the URL and survive a reload', async () => {
    await seedInstances(dash.server, [
      { vmid: 4102, name: 'db-primary', state: 'degraded', stack: 'development' },
      { vmid: 4103, name: 'cache', state: 'testing', stack: 'development' },
      { vmid: 4104, name: 'web-backend', state: 'deployed', stack: 'development' },
    ]);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances');
    await expect.poll(() => renderedVmids(page)).toEqual([4103, 4102, 4104, 4101]); // by name
    await expect.poll(() => page.getByTestId('counts').textContent()).toContain('4 instances');

    // `/` focuses the search box from anywhere on the page.
    await page.locator('h1').click();
    await page.keyboard.press('/');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('search');
    await page.keyboard.type('web-');
    await page.waitForURL('**/instances?search=web-');
    await expect.poll(() => renderedVmids(page)).toEqual([4104, 4101]);
    await expect.poll(() => page.getByTestId('counts').textContent()).toContain('2 instances match');

    await page.getByLabel('State').selectOption('testing');
    await page.waitForURL('**/instances?search=web-&state=testing');
    await expect.poll(() => renderedVmids(page)).toEqual([4101]);

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByLabel('Stack').selectOption('development');
    await expect.poll(() => renderedVmids(page)).toEqual([4103, 4102, 4104]);

    await page.getByRole('button', { name: /VMID/ }).click();
    await expect.poll(() => renderedVmids(page)).toEqual([4102, 4103, 4104]);
    await page.getByRole('button', { name: /VMID/ }).click();
    await expect.poll(() => renderedVmids(page)).toEqual([4104, 4103, 4102]);
    await expect.poll(() => page.locator('th.col-vmid').getAttribute('aria-sort')).toBe('descending');
    expect(new URL(page.url()).search).toBe('?stack=development&sort=vmid&order=desc');

    // The URL is the view: a bookmark or reload shows the same rows.
    await page.reload();
    await expect.poll(() => renderedVmids(page)).toEqual([4104, 4103, 4102]);
    await expect.poll(() => page.getByLabel('Stack').inputValue()).toBe('development');

    await page.getByLabel('Search').fill('zzz-nothing');
    await expect.poll(() => page.getByText('No instances match this search').isVisible()).toBe(true);
  });

  it('a letter typed while the search reaches the URL is kept', async () => {
    const page = await dash.newPage();
    await page.clock.install();
    await signIn(page, dash.server, 'viewer', '/instances');
    await expect.poll(() => page.getByTestId('counts').textContent()).toMatch(/\d+ instances?/);
    await page.clock.pauseAt(Date.now() + 60_000);
    const box = page.getByLabel('Search');
    await box.click();
    await page.keyboard.type('we');
    // The typing pauses: the box's search goes to the URL, and the page redraws on its next frame.
    // Time moves a millisecond at a time until the URL has it; the next letter comes before that frame.
    for (let ms = 0; ms < 1000 && new URL(page.url()).search !== '?search=we'; ms++) await page.clock.runFor(1);
    expect(new URL(page.url()).search).toBe('?search=we');
    await page.keyboard.type('b');
    await page.clock.runFor(600);
    await expect.poll(() => box.inputValue()).toBe('web');
    await expect.poll(() => new URL(page.url()).search).toBe('?search=web');
  });

  it('deleting a production instance is not offered: the button is disabled with the reason beside it', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/instances/4101');
    const rule = page.locator('#delete-rule');
    await expect.poll(() => rule.textContent()).toContain('Production instances cannot be deleted');
    const button = page.getByRole('button', { name: 'Delete instance' });
    expect(await button.isDisabled()).toBe(true);
    expect(await button.getAttribute('aria-describedby')).toBe('delete-rule');
    expect(await rule.isVisible()).toBe(true);
    // The server still refuses it, should anything send it.
    expect(await pageFetch(page, 'DELETE', '/api/instances/4101')).toEqual({
      status: 422,
      body: { error: 'production instances cannot be deleted; change the stack to development first' },
    });
    expect((await dash.server.client.get('/api/instances/4101')).status).toBe(200);

    await page.goto('/instances/4103');
    await page.getByRole('button', { name: 'Delete instance' }).click();
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await page.waitForURL('**/instances');
    expect((await dash.server.client.get('/api/instances/4103')).status).toBe(404);
  });

  it('the timeline shows a service flag by its name and on/off', async () => {
    await seedInstances(dash.server, [{ vmid: 4105, name: 'flagged', state: 'deployed', stack: 'development' }]);
    expect((await dash.server.client.put('/api/instances/4105', { argus: 1, hardware_acceleration: 1 })).status).toBe(200);
    expect((await dash.server.client.put('/api/instances/4105', { argus: 0 })).status).toBe(200);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances/4105');
    await expect.poll(() => page.locator('.timeline li').count()).toBe(4);
    const what = (field: string) => page.locator(`.timeline li[data-field="${field}"] .what`).allTextContents();
    expect(await what('argus')).toEqual(['Argus: on → off', 'Argus: off → on']);
    expect(await what('hardware_acceleration')).toEqual(['Hardware acceleration: off → on']);
  });

  it('is readable on a phone-sized window without sideways scrolling', async () => {
    const page = await dash.newPage({ viewport: { width: 375, height: 740 } });
    await signIn(page, dash.server, 'viewer', '/instances');
    await expect.poll(() => page.locator('table.instances tbody tr[data-vmid]').count()).toBeGreaterThan(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.goto('/instances/4101');
    await expect.poll(() => page.locator('.timeline li').count()).toBeGreaterThan(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors).toEqual([]);
  });
});

describe('10,000 instances', () => {
  it('render only the rows in view and scroll to the last one', async () => {
    const big = await startDashboard();
    try {
      const insert = big.server.context.transaction(() => {
        for (let i = 1; i <= 10_000; i++) big.server.instances.create({ vmid: i, name: `node-${String(i).padStart(5, '0')}`, state: 'deployed', stack: 'development' });
      });
      insert();
      const page = await big.newPage({ viewport: { width: 1280, height: 800 } });
      await signIn(page, big.server, 'viewer', '/instances');
      await expect.poll(() => page.getByTestId('counts').textContent(), { timeout: 10_000 }).toContain('10,000 instances');
      const rendered = await page.locator('table.instances tbody tr[data-vmid]').count();
      expect(rendered).toBeGreaterThan(5);
      expect(rendered).toBeLessThan(80);
      await page.getByTestId('instance-scroller').evaluate((el) => (el.scrollTop = el.scrollHeight));
      await expect.poll(async () => (await renderedVmids(page)).at(-1)).toBe(10_000);
      await expect.poll(() => page.locator('table.instances tbody tr[data-vmid]').count()).toBeLessThan(80);
    } finally {
      await big.stop();
    }
  });
});

// `tailscale_ip` stays IPv4 (registry-service.md); the device's IPv6 tailnet address is shown beside it.
describe('the tailnet IPv6 address on the instance pages', () => {
  const IPV4 = '100.87.74.78';
  const FIRST = 'fd7a:115c:a1e0:ab12:4843:cd96:6258:b241';
  const MOVED = 'fd7a:115c:a1e0:ab12:4843:cd96:6258:b2ff';
  const devices = (ipv6: string) => ({
    devices: [{ addresses: [IPV4, ipv6], id: '92960230385', nodeId: 'n292kg92CNTRL', name: 'nextcloud.tail1234.ts.net', hostname: 'nextcloud', os: 'linux', authorized: true }],
  });
  let tailnet: Dashboard;
  let tailscale: MockRemote;
  let jobId: number;
  beforeAll(async () => {
    tailscale = await startMockRemote(json(200, devices(FIRST)));
    // A database file, so the sync jobs are seeded (an in-memory database has none).
    tailnet = await startDashboard({ dbPath: tempDbPath() });
    await seedInstances(tailnet.server, [{ vmid: 4301, name: 'nextcloud', state: 'deployed', stack: 'production' }]);
    jobId = ((await tailnet.server.client.get('/api/jobs')).body as { id: number; key: string }[]).find((j) => j.key === 'tailscale_sync')!.id;
    expect((await tailnet.server.client.put(`/api/jobs/${jobId}`, { config: { api_key: 'tskey-api-e2e', api_url: tailscale.url } })).status).toBe(200);
    expect((await tailnet.server.client.post(`/api/jobs/${jobId}/run`)).status).toBe(200);
  });
  afterAll(async () => {
    await tailnet?.stop();
    await tailscale?.close();
    removeTempDbs();
  });

  it('the detail page shows it after the Tailscale IP and follows a run live; the edit page shows it read-only and saving keeps it', async () => {
    const page = await tailnet.newPage();
    await signIn(page, tailnet.server, 'operator', '/instances/4301');
    const shown = page.getByTestId('tailnet-ipv6');
    await expect.poll(() => shown.textContent()).toBe(FIRST);
    const terms = await page.locator('dl.props dt').allTextContents();
    expect(terms.slice(terms.indexOf('Tailscale IP'), terms.indexOf('Tailscale IP') + 2)).toEqual(['Tailscale IP', 'Tailnet IPv6']);
    expect(await page.locator('dl.props dt:text-is("Tailscale IP") + dd').textContent()).toBe(IPV4);

    // A run that moves only the IPv6 address reaches the open page through the live stream.
    tailscale.handle(json(200, devices(MOVED)));
    expect((await tailnet.server.client.post(`/api/jobs/${jobId}/run`)).body).toEqual({ summary: 'Updated 0 of 1 instances' });
    await expect.poll(() => shown.textContent()).toBe(MOVED);

    await page.getByRole('link', { name: 'Edit' }).click();
    const field = page.getByLabel('Tailnet IPv6');
    // Shown, not editable: an output, not an input the form could send.
    await expect.poll(() => field.textContent()).toBe(MOVED);
    expect(await field.evaluate((el) => el.tagName)).toBe('OUTPUT');
    await page.getByLabel('State').selectOption('testing');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL('**/instances/4301');
    await expect.poll(() => shown.textContent()).toBe(MOVED);
    expect((await tailnet.server.client.get('/api/instances/4301')).body).toMatchObject({ state: 'testing', tailscale_ip: IPV4, tailscale_ipv6: MOVED });

    // The list keeps its one-line rows: the IPv6 address is in the Tailscale IP cell's title.
    await page.goto('/instances');
    await expect.poll(() => page.locator('tr[data-vmid="4301"] td.col-ip').getAttribute('title')).toBe(`Tailnet IPv6 ${MOVED}`);

    // On a phone the address wraps in its cell instead of widening the page.
    const phone = await tailnet.newPage({ viewport: { width: 390, height: 844 } });
    await signIn(phone, tailnet.server, 'viewer', '/instances/4301');
    await expect.poll(() => phone.getByTestId('tailnet-ipv6').textContent()).toBe(MOVED);
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(tailnet.errors).toEqual([]);
  });
});
