// Moving between pages: every page but the first ones is a chunk fetched when it first opens (App.tsx),
// so each link is followed in turn, twice, and every time the page shown must be the one asked for.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn, startDashboard, type Dashboard } from './helpers.js';

describe('the header links', () => {
  let dash: Dashboard;
  beforeAll(async () => {
    dash = await startDashboard();
  });
  afterAll(() => dash?.stop());

  it('each opens its own page, from any other, without a reload', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/instances');
    const nav = page.getByRole('navigation', { name: 'Main' });
    const pages = ['Instances', 'Collections', 'Jobs', 'Hosts', 'Health', 'Alerts', 'Campaigns', 'Usage', 'Scripts', 'Telemetry', 'Settings', 'Users', 'Audit'];
    // A marker on the window: gone if any click reloaded the document.
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true));
    for (const name of [...pages, ...pages.slice().reverse()]) {
      await nav.getByRole('link', { name }).click();
      await page.waitForURL(`**/${name.toLowerCase()}`);
      await expect.poll(() => page.locator('main h1').textContent(), { message: `after clicking ${name}` }).toBe(name);
    }
    const account = page.locator('button[aria-controls="account-links"]');
    for (const [link, title] of [['API tokens', 'API tokens'], ['Sign-in security', 'Sign-in security'], ['Password', 'Change password']] as const) {
      await account.click();
      await page.getByRole('link', { name: link }).click();
      await expect.poll(() => page.locator('main h1').textContent(), { message: `after clicking ${link}` }).toBe(title);
    }
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    expect(dash.errors).toEqual([]);
  });
});
