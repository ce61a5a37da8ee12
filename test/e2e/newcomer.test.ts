// Issue 34, what a newcomer found beyond the guest table, each at 1280 × 800 and at 390 × 844: charts
// without data, chart times, the heartbeat interval in words, the VMID range, a new user's row, the
// checkbox size, a long machine id on a phone and the install command. Screenshots go to a temp folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDir, enroll, enrollmentToken, heartbeat } from '../helpers/hosts.js';
import { signIn, startDashboard, type Dashboard, noSidewaysScroll } from './helpers.js';

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;
const shots = path.join(os.tmpdir(), 'homefleet-s34-shots');
fs.mkdirSync(shots, { recursive: true });
const slow = { timeout: 45_000 };

describe('what a newcomer met on the dashboard', () => {
  let dash: Dashboard;
  let quiet: number;
  let busy: number;
  beforeAll(async () => {
    // FLEET_HEARTBEAT_INTERVAL_S=10: the Hosts page must say so.
    dash = await startDashboard({ config: { agentAllowHttp: true }, hosts: { agentDir: agentDir('1.0.0'), heartbeatIntervalS: 10 } });
    const quietHost = await enroll(dash.server.anonymous(), await enrollmentToken(dash.server), { hostname: 'pve-quiet', machine_id: '0f1e2d3c4b5a69788796a5b4c3d2e1f0' });
    quiet = quietHost.body.host_id;
    const busyHost = await enroll(dash.server.anonymous(), await enrollmentToken(dash.server), { hostname: 'pve-busy', machine_id: '9a8b7c6d5e4f30211203f4e5d6c7b8a9' });
    busy = busyHost.body.host_id;
    const metrics = { cpu: 0.25, mem_used: 4 * 2 ** 30, mem_total: 16 * 2 ** 30, disk_used: 10 * 2 ** 30, disk_total: 100 * 2 ** 30 };
    expect((await heartbeat(dash.server, busyHost.body.host_token, { hostname: 'pve-busy', metrics })).status).toBe(200);
  });
  afterAll(() => dash?.stop());

  for (const viewport of VIEWPORTS) {
    it(`${viewport.name}: a host without numbers says "no data yet" on each chart; chart times are 24-hour UTC`, slow, async () => {
      const page = await dash.newPage({ viewport });
      await signIn(page, dash.server, 'viewer', `/hosts/${quiet}`);
      const charts = page.getByTestId('charts');
      await expect.poll(() => charts.getByTestId('no-data').allTextContents()).toEqual(['no data yet', 'no data yet', 'no data yet', 'no data yet']);
      expect(await charts.locator('canvas').count()).toBe(0);
      expect(await noSidewaysScroll(page)).toBe(true);
      await page.getByTestId('charts').screenshot({ path: path.join(shots, `charts-empty-${viewport.name}.png`) });

      await page.goto(`/hosts/${busy}`);
      const cpu = page.getByTestId('chart-cpu');
      await expect.poll(() => cpu.locator('canvas').count()).toBe(1);
      // CPU had one reading, the network's rate needs two: its chart says so rather than draw empty axes.
      expect(await page.getByTestId('chart-network').getByTestId('no-data').textContent()).toBe('no data yet');
      for (const range of ['1 h', '24 h', '7 d']) {
        await page.getByRole('button', { name: range }).click();
        await expect.poll(() => cpu.getByTestId('plot').getAttribute('data-x-labels')).toBeTruthy();
        const labels = (await cpu.getByTestId('plot').getAttribute('data-x-labels'))!.split('|');
        expect(labels.length, range).toBeGreaterThan(1);
        for (const label of labels) expect(label, range).toMatch(/^(([01]\d|2[0-3]):[0-5]\d(\n\d{2}-\d{2})?|\d{2}-\d{2})$/);
      }
      expect((await cpu.getByTestId('plot').getAttribute('data-x-labels'))!).not.toMatch(/am|pm/i);
      await page.getByRole('button', { name: '1 h' }).click();
      await page.getByTestId('charts').screenshot({ path: path.join(shots, `charts-${viewport.name}.png`) });
      expect(dash.errors).toEqual([]);
    });

    it(`${viewport.name}: the Hosts page says the interval agents really report at; the machine id wraps; checkboxes are a normal size; the install command is monospace and breaks only between words`, slow, async () => {
      const page = await dash.newPage({ viewport });
      await signIn(page, dash.server, 'administrator', '/hosts');
      await expect.poll(() => page.getByTestId('report-interval').allTextContents()).toEqual(['Hypervisors running the homefleet agent report their guests here every 10 s.']);

      await page.getByRole('button', { name: 'Add a host' }).click();
      await page.getByRole('button', { name: 'Create install command' }).click();
      const command = page.getByTestId('install-command').locator('pre.command');
      await command.waitFor();
      expect(await command.evaluate((e) => getComputedStyle(e).fontFamily)).toMatch(/mono/i);
      // Each word of the command on one line: a word broken across lines has two boxes.
      const broken = await command.locator('code').evaluate((code) => {
        const words: string[] = [];
        const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
        for (let text = walk.nextNode() as Text | null; text; text = walk.nextNode() as Text | null) {
          let at = 0;
          for (const word of text.data.split(' ')) {
            const range = document.createRange();
            range.setStart(text, at);
            range.setEnd(text, at + word.length);
            if (word && new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1) words.push(word);
            at += word.length + 1;
          }
        }
        return words;
      });
      expect(broken).toEqual([]);
      expect(await page.getByTestId('install-command').getByRole('button', { name: 'Copy' }).count()).toBe(1);
      expect(await noSidewaysScroll(page)).toBe(true);
      await page.getByTestId('install-command').screenshot({ path: path.join(shots, `install-${viewport.name}.png`) });

      await page.goto(`/hosts/${quiet}`);
      const sync = page.getByLabel(/apply drift on every heartbeat/);
      await sync.waitFor();
      const box = (await sync.boundingBox())!;
      expect(box.width).toBeGreaterThanOrEqual(13);
      expect(box.height).toBeGreaterThanOrEqual(13);
      const machineId = page.locator('.props dd', { hasText: '0f1e2d3c4b5a' });
      expect(await machineId.evaluate((dd) => dd.scrollWidth <= dd.clientWidth)).toBe(true);
      await expect.poll(() => page.locator('main').getByText('Loading…').count()).toBe(0);
      expect(await noSidewaysScroll(page)).toBe(true);
      await page.locator('.props').screenshot({ path: path.join(shots, `facts-admin-${viewport.name}.png`) });
      expect(dash.errors).toEqual([]);
    });

    it(`${viewport.name}: the instance form warns, and does not refuse, a VMID no Proxmox guest can have`, slow, async () => {
      const page = await dash.newPage({ viewport });
      await signIn(page, dash.server, 'operator', '/instances/new');
      const vmid = viewport.name === 'desktop' ? '42' : '43';
      const warning = page.locator('#vmid-warning');
      await page.getByLabel('VMID').fill(vmid);
      await expect.poll(() => warning.allTextContents()).toEqual(['Proxmox numbers guests 100 to 999,999,999: no host can ever report this one. It is saved anyway.']);
      await page.getByLabel('VMID').fill('1000000000');
      await expect.poll(() => warning.count()).toBe(1);
      await page.getByLabel('VMID').fill('150');
      await expect.poll(() => warning.count()).toBe(0);
      await page.getByLabel('VMID').fill(vmid);
      await page.getByLabel('Name').fill(`low-${vmid}`);
      await page.locator('form').screenshot({ path: path.join(shots, `instance-form-${viewport.name}.png`) });
      await page.getByRole('button', { name: 'Create instance' }).click();
      await page.waitForURL(`**/instances/${vmid}`);
      expect((await dash.server.client.get(`/api/instances/${vmid}`)).body).toMatchObject({ name: `low-${vmid}` });
      expect(dash.errors).toEqual([]);
    });

    it(`${viewport.name}: a user made on the Users page shows at once with its own fields`, slow, async () => {
      const page = await dash.newPage({ viewport });
      await signIn(page, dash.server, 'administrator', '/users');
      await page.locator('tr[data-user]').first().waitFor();
      await expect.poll(() => page.getByTestId('sign-in-factors').count()).toBeGreaterThan(0);
      const username = `newcomer-${viewport.name}`;
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Display name').fill('New Comer');
      await page.locator('#new-role').selectOption('operator');
      await page.getByRole('button', { name: 'Create user' }).click();
      const row = page.locator(`tr[data-user="${username}"]`);
      await expect.poll(() => row.count()).toBe(1);
      expect(await row.locator('select').inputValue()).toBe('operator');
      await expect.poll(() => row.getByTestId('sign-in-factors').allTextContents()).toEqual(['password only']);
      expect(await row.textContent()).toContain('must change password');
      expect(await row.getByRole('button', { name: 'Clear second factor…' }).isDisabled()).toBe(true);
      expect(await noSidewaysScroll(page)).toBe(true);
      await row.screenshot({ path: path.join(shots, `user-row-${viewport.name}.png`) });
      expect(dash.errors).toEqual([]);
    });
  }
});
