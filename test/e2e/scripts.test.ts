import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startDashboard, type Dashboard } from './helpers.js';

describe('Scripts', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard();
  });
  afterAll(() => dash?.stop());

  it('an operator writes a script, changes it, reads the diff with added and removed lines coloured, and deletes it after confirming', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/scripts');
    await page.getByText('No script yet.').waitFor();
    await page.getByRole('link', { name: 'New script' }).click();
    const form = page.getByTestId('script-form');
    await form.getByLabel('Name').fill('Patch web');
    await form.getByLabel('Description').fill('apt upgrade in the web containers');
    await form.getByLabel('Script', { exact: true }).fill('#!/bin/bash\napt-get update\napt-get -y upgrade\n');
    await form.getByRole('button', { name: 'Add script' }).click();
    await page.waitForURL(/\/scripts\/\d+$/);

    await form.getByLabel('Interpreter').selectOption('sh');
    await form.getByLabel('Script', { exact: true }).fill('#!/bin/sh\napt-get update\napt-get -y dist-upgrade\n');
    await form.getByRole('button', { name: 'Save script' }).click();
    await page.getByText('Script “Patch web” saved as version 2.').waitFor();

    const diff = page.getByTestId('script-diff');
    await expect.poll(() => diff.locator('.diff-add').allTextContents()).toEqual(['+#!/bin/sh', '+apt-get -y dist-upgrade']);
    expect(await diff.locator('.diff-del').allTextContents()).toEqual(['-#!/bin/bash', '-apt-get -y upgrade']);
    const [added, removed] = await Promise.all([diff.locator('.diff-add').first(), diff.locator('.diff-del').first()].map((l) => l.evaluate((e) => getComputedStyle(e).color)));
    expect(added).not.toBe(removed);
    await page.getByLabel('Compared with').selectOption('none');
    await expect.poll(() => page.getByTestId('script-text').textContent()).toBe('#!/bin/sh\napt-get update\napt-get -y dist-upgrade\n');

    await page.getByRole('link', { name: 'All scripts' }).click();
    const row = page.locator('tr[data-script="Patch web"]');
    expect(await row.textContent()).toContain('guests');
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.getByRole('button', { name: 'Delete “Patch web”' }).click();
    await page.getByText('Script “Patch web” deleted, with its versions.').waitFor();
    expect((await dash.server.client.get('/api/scripts')).body).toEqual([]);
    expect(dash.errors).toEqual([]);
  });

  it('a viewer sees the summaries, without links to bodies or buttons', async () => {
    await dash.server.client.post('/api/scripts', { name: 'Host check', runs_on: 'host', interpreter: 'bash', body: 'uptime\n' });
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/scripts');
    const row = page.locator('tr[data-script="Host check"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('the host');
    expect(await row.getByRole('link').count()).toBe(0);
    expect(await row.getByRole('button').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'New script' }).count()).toBe(0);
    expect(dash.errors).toEqual([]);
  });
});
