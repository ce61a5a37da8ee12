#!/usr/bin/env node
// `npm run screenshots`: the main dashboard pages in light and dark themes (and the list on a phone),
// taken from a real headless server with sample data, into screenshots/ (ignored by git).
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumLaunchOptions } from './chromium.mjs';
import { root, sampleInstances, startHeadless } from './headless-server.mjs';

const out = path.join(root, 'screenshots');
fs.mkdirSync(out, { recursive: true });
const server = await startHeadless();
const browser = await chromium.launch(await chromiumLaunchOptions());
try {
  await server.seedInstances(sampleInstances(48));
  // One instance with a change history for the timeline.
  await server.request('PUT', '/api/instances/101', { state: 'testing' });
  await server.request('PUT', '/api/instances/101', { state: 'deployed', tailscale_ip: '100.64.9.9' });
  if (server.accessLayer) {
    await server.request('POST', '/api/users', { username: 'olivia', display_name: 'Olivia Operator', role: 'operator' });
    await server.request('POST', '/api/users', { username: 'victor', display_name: 'Victor Viewer', role: 'viewer' });
  }

  const pages = [
    ['instances', '/instances'],
    ['instances-filtered', '/instances?search=web&sort=vmid&order=desc'],
    ['instance-detail', '/instances/101'],
    ['instance-edit-error', '/instances/new'],
    ['jobs', '/jobs'],
    ['settings', '/settings'],
    ['users', '/users'],
    ['audit', '/audit'],
    ['telemetry', '/telemetry'],
    ['password', '/password'],
  ];
  const taken = [];
  for (const colorScheme of ['light', 'dark']) {
    const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    if (server.accessLayer) {
      await page.goto(`${server.url}/login`);
      await page.waitForSelector('form');
      await shoot(page, `login-${colorScheme}`);
      await server.signInPage(page);
    }
    for (const [name, url] of pages) {
      await page.goto(server.url + url);
      await page.waitForSelector('main h1');
      await page.waitForLoadState('networkidle');
      if (name === 'instance-edit-error') {
        await page.getByLabel('VMID').fill('100');
        await page.getByLabel('Name').fill('duplicate');
        await page.getByLabel('Tailscale IP').fill('10.0.0.300');
        await page.getByRole('button', { name: 'Create instance' }).click();
        await page.waitForSelector('.field-error');
      }
      await shoot(page, `${name}-${colorScheme}`);
    }
    const phone = await browser.newContext({ colorScheme, viewport: { width: 375, height: 740 }, storageState: await context.storageState() });
    const small = await phone.newPage();
    for (const [name, url] of [['instances', '/instances'], ['instance-detail', '/instances/101']]) {
      await small.goto(server.url + url);
      await small.waitForSelector('main h1');
      await small.waitForLoadState('networkidle');
      await shoot(small, `${name}-phone-${colorScheme}`);
    }
    await phone.close();
    await context.close();
  }

  async function shoot(page, name) {
    const file = path.join(out, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    taken.push(path.relative(root, file));
  }
  console.log(`${taken.length} screenshots:\n${taken.join('\n')}`);
} finally {
  await browser.close();
  await server.stop();
}
