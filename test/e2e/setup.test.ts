import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from './helpers.js';

const TOKEN = 'e2e-setup-token-0123456789';

describe('first-administrator setup in Chromium', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard({ signedIn: false, config: { setupToken: TOKEN } });
  });
  afterAll(() => dash?.stop());

  it('follows a dark system theme', async () => {
    const page = await dash.newPage({ colorScheme: 'dark' });
    await page.goto(`/setup?token=${TOKEN}`);
    await page.getByRole('button', { name: 'Create administrator' }).waitFor();
    const [background, text] = await page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    const luminance = (rgb: string) => rgb.match(/\d+/g)!.slice(0, 3).reduce((sum, v) => sum + Number(v), 0) / 3;
    expect(luminance(background)).toBeLessThan(60);
    expect(luminance(text)).toBeGreaterThan(180);
    const light = await dash.newPage({ colorScheme: 'light' });
    await light.goto(`/setup?token=${TOKEN}`);
    expect(luminance(await light.evaluate(() => getComputedStyle(document.body).backgroundColor))).toBeGreaterThan(200);
  });

  it('the setup form from the link with the token creates the administrator, who then signs in', async () => {
    const page = await dash.newPage();
    await page.goto(`/setup?token=${TOKEN}`);
    await expect.poll(() => page.getByLabel('Setup token').inputValue()).toBe(TOKEN);
    // The browser checks lengths itself; the server's character rule for usernames is its own.
    await page.getByLabel('Username').fill('alice admin');
    await page.getByLabel('Display name').fill('Alice Admin');
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await page.getByLabel('Repeat the password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    // A validation error keeps the token that came with the link, so the form can be sent again as it is.
    await page.locator('.error').waitFor();
    await expect.poll(() => page.locator('.error').textContent()).toContain('username may contain only');
    await expect.poll(() => page.getByLabel('Setup token').inputValue()).toBe(TOKEN);
    await expect.poll(() => page.getByLabel('Display name').inputValue()).toBe('Alice Admin');
    // The repeat must match; the server checks it too (the page has no script).
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await page.getByLabel('Repeat the password').fill('a long enough passw0rd');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await expect.poll(() => page.locator('.error').textContent()).toBe('the repeated password does not match the password');
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await page.getByLabel('Repeat the password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.waitForURL('**/login?setup=done');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Administrator created' }).textContent()).toBe('Administrator created, sign in.');

    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('a long enough password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/instances');
    await expect.poll(() => page.locator('.account .who').textContent()).toContain('alice');

    // Setup is closed for good once an account exists.
    const closed = await page.goto(`/setup?token=${TOKEN}`);
    expect(closed?.status()).toBe(404);
  });

  it('looks like the dashboard: a card on the page background, and fits a 390 px phone', async () => {
    const page = await dash.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`/setup?token=${TOKEN}`);
    const card = await page.locator('main').evaluate((el) => {
      const style = getComputedStyle(el);
      return { border: style.borderTopStyle, radius: style.borderTopLeftRadius, background: style.backgroundColor, page: getComputedStyle(document.body).backgroundColor };
    });
    expect(card).toMatchObject({ border: 'solid', radius: '8px' });
    expect(card.background).not.toBe(card.page);
    expect(await page.locator('.brand').textContent()).toBe('homefleet');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
  });
});
