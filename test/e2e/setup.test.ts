import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from './helpers.js';

const TOKEN = 'e2e-setup-token-0123456789';

describe('first-administrator setup in Chromium', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard({ signedIn: false, config: { setupToken: TOKEN } });
  });
  afterAll(() => dash?.stop());

  it('the setup form from the link with the token creates the administrator, who then signs in', async () => {
    const page = await dash.newPage();
    await page.goto(`/setup?token=${TOKEN}`);
    expect(await page.getByLabel('Setup token').inputValue()).toBe(TOKEN);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Display name').fill('Alice Admin');
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.waitForURL('**/login');

    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/instances');
    await expect.poll(() => page.locator('.account .who').textContent()).toContain('alice');

    // Setup is closed for good once an account exists.
    const closed = await page.goto(`/setup?token=${TOKEN}`);
    expect(closed?.status()).toBe(404);
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
  });
});
