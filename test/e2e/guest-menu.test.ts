// Issue 34, the host page as a newcomer met it: at 1280 × 800 and at 390 × 844, each guest has one
// menu offering what fits its state, every form opens in a dialog inside the window, templates are
// listed apart and a locked guest says so. Screenshots go to a temp folder to be looked at.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentDir, bearer, enroll, enrollmentToken, heartbeat } from '../helpers/hosts.js';
import { signIn, startDashboard, type Dashboard, noSidewaysScroll } from './helpers.js';

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;
const shots = path.join(os.tmpdir(), 'homefleet-s34-shots');
fs.mkdirSync(shots, { recursive: true });

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const config = (memory: number) => `boot: order=scsi0\ncores: 2\nmemory: ${memory}\nname: web1\n`;
const guests = [
  { vmid: 8101, name: 'web1', type: 'qemu', status: 'running', config_sha256: sha(config(4096)) },
  { vmid: 8102, name: 'scratch', type: 'lxc', status: 'stopped' },
  { vmid: 8103, name: 'tmpl-debian-12', type: 'qemu', status: 'stopped', template: true },
  { vmid: 8104, name: 'backing-up', type: 'lxc', status: 'running', lock: 'backup' },
];

/** Inside the window: what a person can see without scrolling sideways. */
async function inViewport(page: Page, locator: Locator, what: string): Promise<void> {
  const box = (await locator.boundingBox())!;
  const { width, height } = page.viewportSize()!;
  expect(box, what).not.toBeNull();
  expect(box.x, `${what}: left edge`).toBeGreaterThanOrEqual(0);
  expect(box.y, `${what}: top edge`).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width, `${what}: right edge`).toBeLessThanOrEqual(width);
  expect(box.y + box.height, `${what}: bottom edge`).toBeLessThanOrEqual(height);
}

describe('the host page’s guests at 1280 and at 390 px', () => {
  let dash: Dashboard;
  let hostId: number;
  let hostToken: string;
  beforeAll(async () => {
    dash = await startDashboard({ config: { agentAllowHttp: true }, hosts: { agentDir: agentDir('1.0.0'), heartbeatIntervalS: 10 } });
    await dash.server.client.post('/api/instances', { vmid: 8101, name: 'web1', state: 'deployed', stack: 'production' });
    await dash.server.client.post('/api/instances', { vmid: 8102, name: 'scratch', state: 'testing', stack: 'development' });
    // A real machine id is 32 hex digits: longer than a phone's column beside its label.
    const enrolled = await enroll(dash.server.anonymous(), await enrollmentToken(dash.server, { name: 'menu' }), { hostname: 'pve-menu', machine_id: '4f1c9a7e2b3d4c5e8f9a0b1c2d3e4f5a' });
    expect(enrolled.status).toBe(201);
    ({ host_id: hostId, host_token: hostToken } = enrolled.body);
    const upload = (memory: number) => dash.server.anonymous().post('/api/agent/guest-configs', { vmid: 8101, sha256: sha(config(memory)), text: config(memory) }, bearer(hostToken));
    expect((await heartbeat(dash.server, hostToken, { hostname: 'pve-menu', guests: guests.map((g) => (g.vmid === 8101 ? { ...g, config_sha256: sha(config(2048)) } : g)) })).status).toBe(200);
    expect((await upload(2048)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await heartbeat(dash.server, hostToken, { hostname: 'pve-menu', guests })).status).toBe(200);
    expect((await upload(4096)).status).toBe(204);
  });
  // Online needs a heartbeat within 3 intervals (30 s here); the host may send one an interval.
  beforeEach(async () => {
    const last = Date.parse((await dash.server.client.get(`/api/hosts/${hostId}`)).body.last_heartbeat_at);
    if (Date.now() - last > 10_000) expect((await heartbeat(dash.server, hostToken, { hostname: 'pve-menu', guests })).status).toBe(200);
  });
  afterAll(() => dash?.stop());
  // Two browsers' worth of pages on a shared 2-core machine.
  const slow = { timeout: 45_000 };

  /** The host page: the heartbeats report 8103 as a template and 8104 under a backup lock. */
  async function hostPage(viewport: { width: number; height: number }, role: 'operator' | 'administrator' = 'operator'): Promise<Page> {
    const page = await dash.newPage({ viewport });
    await signIn(page, dash.server, role, `/hosts/${hostId}`);
    await page.locator('tr[data-guest="8101"]').waitFor();
    return page;
  }

  const menuOf = (page: Page, vmid: number) => page.locator(`#guest-menu-${vmid}-button`);
  async function menuItems(page: Page, vmid: number): Promise<string[]> {
    await menuOf(page, vmid).click();
    const menu = page.locator(`#guest-menu-${vmid}`);
    await menu.waitFor();
    const items = menu.getByRole('menuitem');
    for (const item of await items.all()) await inViewport(page, item, `menu item ${await item.textContent()} of ${vmid}`);
    const labels = await items.allTextContents();
    await page.keyboard.press('Escape');
    await expect.poll(() => menu.count()).toBe(0);
    return labels;
  }

  for (const viewport of VIEWPORTS) {
    it(`${viewport.name}: each row has one menu with only what fits its state; templates are apart; a lock is shown with the reason`, slow, async () => {
      const page = await hostPage(viewport);
      await expect.poll(() => page.getByTestId('templates').locator('tr[data-template="8103"]').count()).toBe(1);
      expect(await page.locator('tr[data-guest="8103"]').count()).toBe(0);
      // A template is never drift: the real heartbeat said template, and the page proposes nothing for it.
      expect(await page.locator('body').textContent()).not.toContain('tmpl-debian-12” has no instance');
      expect(await page.getByTestId('guests').locator('h2').textContent()).toBe('Guests (3)');
      await expect.poll(() => page.locator('tr[data-guest="8101"] .badge-production').count()).toBe(1);
      expect(await noSidewaysScroll(page)).toBe(true);
      // One button per row, not eight.
      expect(await page.locator('tr[data-guest="8101"] button').count()).toBe(1);

      await menuOf(page, 8101).click();
      await page.screenshot({ path: path.join(shots, `menu-${viewport.name}.png`) });
      await page.keyboard.press('Escape');
      expect(await menuItems(page, 8101)).toEqual(['Shutdown…', 'Stop…', 'Reboot…', 'Snapshot…', 'Roll back…', 'Clone…', 'Rebuild…', 'Config history…']);
      expect(await menuItems(page, 8102)).toEqual(['Start', 'Snapshot…', 'Roll back…', 'Clone…', 'Rebuild…', 'Destroy…', 'Config history…']);
      expect(await menuItems(page, 8103)).toEqual(['Clone…', 'Config history…']);

      // Locked: said in the row, and in the menu, whose actions cannot be chosen.
      expect(await page.getByTestId('guest-lock-8104').textContent()).toBe('locked: backup');
      await menuOf(page, 8104).click();
      const locked = page.locator('#guest-menu-8104');
      expect(await locked.locator('.menu-note').textContent()).toBe('Locked (backup): actions wait until the lock clears.');
      expect(await locked.getByRole('menuitem', { name: 'Stop…' }).getAttribute('aria-disabled')).toBe('true');
      await locked.getByRole('menuitem', { name: 'Stop…' }).click({ force: true });
      expect(await page.locator('dialog[open]').count()).toBe(0);
      await page.keyboard.press('Escape');
      await page.screenshot({ path: path.join(shots, `host-${viewport.name}.png`), fullPage: true });
      await page.getByTestId('guests').screenshot({ path: path.join(shots, `guests-${viewport.name}.png`) });
      await page.locator('.props').screenshot({ path: path.join(shots, `facts-${viewport.name}.png`) });
      expect(dash.errors).toEqual([]);
    });

    it(`${viewport.name}: the menu works from the keyboard; Stop names a production guest; Escape gives focus back`, slow, async () => {
      const page = await hostPage(viewport);
      const button = menuOf(page, 8101);
      await button.focus();
      await page.keyboard.press('Enter');
      const menu = page.locator('#guest-menu-8101');
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Shutdown…');
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Stop…');
      await page.keyboard.press('Escape');
      await expect.poll(() => menu.count()).toBe(0);
      expect(await button.evaluate((b) => b === document.activeElement)).toBe(true);

      // Each key once the menu has moved focus for the one before (it opens, then focuses, in a render).
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Shutdown…');
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Stop…');
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Stop 8101 “web1”' });
      await dialog.waitFor();
      expect(await dialog.getByTestId('production-warning').textContent()).toBe('web1 is a production guest.');
      await inViewport(page, dialog, 'the stop dialog');
      await inViewport(page, dialog.getByRole('button', { name: 'Stop 8101 “web1”' }), 'the stop button');
      await page.screenshot({ path: path.join(shots, `stop-${viewport.name}.png`) });
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.count()).toBe(0);
      expect(await button.evaluate((b) => b === document.activeElement)).toBe(true);
      // Nothing was asked of the host.
      expect((await dash.server.client.get(`/api/operations?host_id=${hostId}&vmid=8101`)).body).toEqual([]);
      expect(dash.errors).toEqual([]);
    });

    it(`${viewport.name}: clone’s dialog says the VMID range, keeps its fields in view, and refuses an id Proxmox cannot take before sending`, slow, async () => {
      const page = await hostPage(viewport);
      await menuOf(page, 8102).click();
      await page.getByRole('menuitem', { name: 'Clone…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Clone 8102 “scratch”' });
      await dialog.waitFor();
      const vmid = dialog.getByLabel('New VMID');
      expect([await vmid.getAttribute('min'), await vmid.getAttribute('max')]).toEqual(['100', '999999999']);
      expect(await dialog.textContent()).toContain('100 to 999,999,999 (Proxmox’s range)');
      for (const [what, field] of [['dialog', dialog], ['New VMID', vmid], ['New name', dialog.getByLabel('New name')], ['full copy', dialog.getByLabel(/full copy/)], ['Clone button', dialog.getByRole('button', { name: 'Clone 8102 “scratch”' })]] as const) {
        await inViewport(page, field, what);
      }
      expect((await dialog.getByLabel(/full copy/).boundingBox())!.width).toBeGreaterThanOrEqual(13);
      await vmid.fill('99');
      await dialog.getByLabel('New name').fill(`scratch-copy-${viewport.name}`);
      await dialog.getByRole('button', { name: 'Clone 8102 “scratch”' }).click();
      await expect.poll(() => dialog.locator('.field-error').textContent()).toBe('must be a whole number from 100 to 999,999,999');
      expect((await dash.server.client.get(`/api/operations?host_id=${hostId}&vmid=8102&status=pending`)).body).toEqual([]);
      await page.screenshot({ path: path.join(shots, `clone-${viewport.name}.png`) });

      const newVmid = viewport.name === 'desktop' ? 8150 : 8151;
      await vmid.fill(String(newVmid));
      await dialog.getByRole('button', { name: 'Clone 8102 “scratch”' }).click();
      await expect.poll(() => dialog.count()).toBe(0);
      await expect.poll(() => page.getByTestId('guests').getByRole('status').textContent()).toBe('Clone of 8102 “scratch” requested.');
      expect((await dash.server.client.get(`/api/instances/${newVmid}`)).body).toMatchObject({ name: `scratch-copy-${viewport.name}`, state: 'testing', stack: 'development' });
      // Cancelled, so the next test's guest is free again.
      const [op] = (await dash.server.client.get(`/api/operations?host_id=${hostId}&vmid=8102&status=pending`)).body;
      expect((await dash.server.client.delete(`/api/operations/${op.id}`)).status).toBe(204);
      expect(dash.errors).toEqual([]);
    });

    it(`${viewport.name}: destroy asks for the name, and the config history shows a diff labelled by when each version came, in the window`, slow, async () => {
      const page = await hostPage(viewport);
      await menuOf(page, 8102).click();
      await page.getByRole('menuitem', { name: 'Destroy…' }).click();
      const destroy = page.getByRole('dialog', { name: 'Destroy 8102 “scratch”' });
      await destroy.waitFor();
      await inViewport(page, destroy, 'the destroy dialog');
      await inViewport(page, destroy.getByLabel("Type the guest's name"), 'the name field');
      expect(await destroy.getByRole('button', { name: 'Destroy 8102 “scratch”' }).isDisabled()).toBe(true);
      await destroy.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => destroy.count()).toBe(0);

      await menuOf(page, 8101).click();
      await page.getByRole('menuitem', { name: 'Config history…' }).click();
      const configs = page.getByRole('dialog', { name: 'Config of 8101 “web1”' });
      await configs.getByRole('button', { name: 'diff' }).click();
      const view = configs.getByTestId('config-view');
      await expect.poll(() => view.textContent()).toContain('+memory: 4096');
      expect(await view.locator('.diff-del').allTextContents()).toEqual(['-memory: 2048']);
      expect(await view.locator('.diff-add').allTextContents()).toEqual(['+memory: 4096']);
      expect(await view.evaluate((e) => getComputedStyle(e).fontFamily)).toMatch(/mono/i);
      const [newer, older] = (await dash.server.client.get(`/api/hosts/${hostId}/guests/8101/configs`)).body;
      const labels = configs.getByTestId('config-versions').locator('time');
      expect(await labels.evaluateAll((times) => times.map((t) => t.getAttribute('datetime')))).toEqual([older.received_at, newer.received_at]);
      expect(await configs.getByTestId('config-versions').textContent()).toMatch(/^Changes from the version received .* UTC \(− removed\) to the one received .* UTC \(\+ added\)$/);
      await inViewport(page, configs, 'the config dialog');
      await page.screenshot({ path: path.join(shots, `config-${viewport.name}.png`) });
      expect(dash.errors).toEqual([]);
    });
  }
});
