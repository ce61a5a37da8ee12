import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startDashboard, type Dashboard } from './helpers.js';

describe('the API tokens page', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard();
  });
  afterAll(() => dash?.stop());

  it('an operator creates a token (shown once), a script uses it, the list shows its last use, revoking stops it', async () => {
    const page = await dash.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dash.server.baseUrl });
    await signIn(page, dash.server, 'operator', '/instances');
    await page.locator('button[aria-controls="account-links"]').click();
    await page.getByRole('link', { name: 'API tokens' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('API tokens');
    // The role select offers nothing above the operator's own role.
    await expect.poll(() => page.locator('#token-role option').allTextContents()).toEqual(['viewer', 'operator']);
    await page.getByLabel('Name').fill('nightly import');
    await page.getByLabel('Role').selectOption('operator');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByTestId('new-token').locator('code');
    await expect.poll(() => shown.count()).toBe(1);
    const token = (await shown.textContent())!;
    expect(token).toMatch(/^hfp_[A-Za-z0-9_-]{43}$/);
    await page.getByTestId('new-token').getByRole('button', { name: 'Copy token' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await expect.poll(() => page.getByTestId('new-token').getByRole('button', { name: 'Copied' }).count()).toBe(1);

    const script = dash.server.anonymous().fresh({ authorization: `Bearer ${token}`, origin: '' });
    expect((await script.post('/api/instances', { vmid: 5150, name: 'from-script', state: 'deployed', stack: 'development' })).status).toBe(201);

    await page.reload();
    const row = page.locator('tr[data-token="nightly import"]');
    await expect.poll(() => row.textContent()).toContain('from 127.0.0.1');
    await expect.poll(() => page.getByTestId('new-token').count()).toBe(0); // shown once: gone after a reload
    expect(await page.content()).not.toContain(token.slice(4));

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.locator('tr[data-token="nightly import"]').count()).toBe(0);
    expect((await script.get('/api/instances')).status).toBe(401);
    expect(dash.errors).toEqual([]);
  });

  it('an administrator shows every user’s tokens and revokes someone else’s', async () => {
    const viewer = await dash.server.signIn('viewer', 'vicky');
    const made = await viewer.post('/api/tokens', { name: 'vicky laptop', role: 'viewer' });
    expect(made.status).toBe(201);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/tokens');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('API tokens');
    await expect.poll(() => page.locator('tr[data-token="vicky laptop"]').count()).toBe(0);
    await page.getByLabel('Show every user’s tokens').check();
    const row = page.locator('tr[data-token="vicky laptop"]');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('td').nth(1).textContent()).toBe('vicky');
    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.locator('tr[data-token="vicky laptop"]').count()).toBe(0);
    const script = dash.server.anonymous().fresh({ authorization: `Bearer ${made.body.token}`, origin: '' });
    expect((await script.get('/api/instances')).status).toBe(401);
    expect(dash.errors).toEqual([]);
  });
});
