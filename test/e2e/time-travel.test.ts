// "As of" in Chromium (issue 39): the instances page shows the registry as it was at a chosen instant,
// read-only, with a way back to now; the instance page shows its fields as they were at a point of its
// timeline. The server runs on a hand-moved clock, so each moment is exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../helpers/clock.js';
import { renderedVmids, signIn, startDashboard, type Dashboard } from './helpers.js';

const clock = manualClock(Date.parse('2026-11-22T10:00:00.000Z'));
let dash: Dashboard;

beforeAll(async () => {
  dash = await startDashboard({ clock });
  const api = dash.server.client;
  const ok = async (res: Promise<{ status: number; text: string }>, status: number) => expect((await res).status, (await res).text).toBe(status);
  await ok(api.post('/api/instances', { vmid: 4201, name: 'alpha', state: 'testing', stack: 'development' }), 201);
  clock.set(Date.parse('2026-11-22T10:01:00.000Z'));
  await ok(api.put('/api/instances/4201', { name: 'alpha-2', state: 'deployed' }), 200);
  clock.set(Date.parse('2026-11-22T10:02:00.000Z'));
  await ok(api.post('/api/instances', { vmid: 4202, name: 'beta', state: 'testing', stack: 'development' }), 201);
  clock.set(Date.parse('2026-11-22T10:03:00.000Z'));
  await ok(api.delete('/api/instances/4202'), 204);
  clock.set(Date.parse('2026-11-22T10:04:00.000Z'));
});
afterAll(() => dash?.stop());

describe('as of, in Chromium', () => {
  it('the instances page shows the registry as of the chosen instant, read-only, and goes back to now', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/instances');
    await expect.poll(() => renderedVmids(page)).toEqual([4201]);
    expect(await page.getByRole('link', { name: 'New instance' }).isVisible()).toBe(true);
    expect(await page.locator('tbody input[type="checkbox"]').count()).toBeGreaterThan(0);

    await page.getByLabel('As of (UTC)').fill('2026-11-22T10:00:30');
    await expect.poll(() => page.getByTestId('as-of-banner').textContent()).toBe('Showing the registry as of 2026-11-22 10:00:30 UTC');
    await expect.poll(() => page.locator('tr[data-vmid="4201"] .col-name').textContent()).toBe('alpha');
    expect(await renderedVmids(page)).toEqual([4201]);
    expect(await page.locator('tr[data-vmid="4201"] .col-state').textContent()).toBe('testing');
    expect(new URL(page.url()).searchParams.get('at')).toBe('2026-11-22T10:00:30Z');
    // Nothing can be changed in the past.
    expect(await page.getByRole('link', { name: 'New instance' }).count()).toBe(0);
    expect(await page.getByLabel('not reported by any host').isDisabled()).toBe(true);
    // No row to pick for a bulk edit either.
    expect(await page.locator('tbody input[type="checkbox"]').count()).toBe(0);

    // Later: the rename, and an instance deleted since (shown, not linked).
    await page.getByLabel('As of (UTC)').fill('2026-11-22T10:02:30');
    await expect.poll(() => renderedVmids(page)).toEqual([4201, 4202]);
    expect(await page.locator('tr[data-vmid="4201"] .col-name').textContent()).toBe('alpha-2');
    expect(await page.locator('tr[data-vmid="4202"] .col-name').textContent()).toBe('beta (deleted since)');
    expect(await page.locator('tr[data-vmid="4202"] .col-name a').count()).toBe(0);
    // The state filter reads the states then.
    await page.getByLabel('State').selectOption('testing');
    await expect.poll(() => renderedVmids(page)).toEqual([4202]);
    await page.getByLabel('State').selectOption('');

    await page.getByRole('button', { name: 'Back to now' }).click();
    await expect.poll(() => renderedVmids(page)).toEqual([4201]);
    expect(await page.getByTestId('as-of-banner').count()).toBe(0);
    expect(await page.getByLabel('As of (UTC)').inputValue()).toBe('');
    expect(await page.getByRole('link', { name: 'New instance' }).isVisible()).toBe(true);
  });

  it('the instance page shows its fields as they were at a point of its timeline', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/instances?at=2026-11-22T10:00:30Z');
    // From the past list, its page as it was then.
    await page.locator('tr[data-vmid="4201"] .col-name a').click();
    await page.waitForURL('**/instances/4201?at=2026-11-22T10%3A00%3A30Z');
    await expect.poll(() => page.getByTestId('name').textContent()).toBe('alpha');
    expect(await page.getByTestId('as-of-banner').textContent()).toBe('Showing this instance as it was on 2026-11-22 10:00:30 UTC');
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete instance' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Back to now' }).click();
    await expect.poll(() => page.getByTestId('name').textContent()).toBe('alpha-2');
    expect(await page.getByRole('link', { name: 'Edit' }).isVisible()).toBe(true);

    // A point of the timeline: right after its creation.
    await page.locator('.timeline li[data-field="created"]').getByRole('link', { name: 'as of this change' }).click();
    await expect.poll(() => page.getByTestId('name').textContent()).toBe('alpha');
    expect(await page.getByTestId('details').locator('.badge').first().textContent()).toBe('testing');
    expect(await page.locator('.timeline li[data-field="created"]').getAttribute('aria-current')).toBe('true');
    expect(await page.getByTestId('as-of-banner').textContent()).toBe('Showing this instance as it was on 2026-11-22 10:00:00.000 UTC');
    // And after the rename.
    await page.locator('.timeline li[data-field="name"]').getByRole('link', { name: 'as of this change' }).click();
    await expect.poll(() => page.getByTestId('name').textContent()).toBe('alpha-2');
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors).toEqual([]);
  });
});
