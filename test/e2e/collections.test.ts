// Tags, bulk edit and collections in Chromium, on the built dashboard and a real server: tag an
// instance in its form, filter by clicking a chip, bulk-edit two rows (and see the 400 that names the
// vmid and field when the edit cannot be made), save the view as a collection, open, edit and delete it.
// Each role sees what it may use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderedVmids, seedInstances, signIn, startDashboard, type Dashboard } from './helpers.js';

let dash: Dashboard;
beforeAll(async () => {
  dash = await startDashboard();
  await seedInstances(dash.server, [
    { vmid: 4201, name: 'web-1', state: 'testing', stack: 'development' },
    { vmid: 4202, name: 'web-2', state: 'testing', stack: 'development', tags: ['web'] },
    { vmid: 4203, name: 'db-1', state: 'deployed', stack: 'production', tags: ['db'] },
  ]);
});
afterAll(() => dash?.stop());

const api = () => dash.server.client;

describe('tags, bulk edit and collections in Chromium', () => {
  it('tags an instance, filters by a chip, bulk-edits two rows, saves the view as a collection and opens it', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', '/instances/4201/edit');

    // Tag editing in the instance form: typed in one box, shown as chips on the instance page.
    await page.getByLabel('Tags').fill('Web, edge web');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL('**/instances/4201');
    await expect.poll(() => page.getByTestId('instance-tags').locator('.tag').allTextContents()).toEqual(['edge', 'web']);
    await expect.poll(() => page.locator('.timeline li[data-field="tags"] .new').textContent()).toBe('edge, web');

    // A chip on the instance page opens the instances tagged with it; a chip in the list adds to the filter.
    await page.getByTestId('instance-tags').getByRole('link', { name: 'web' }).click();
    await page.waitForURL((url) => url.pathname === '/instances' && url.search === '?tag=web');
    await expect.poll(() => renderedVmids(page)).toEqual([4201, 4202]);
    await page.locator('tr[data-vmid="4201"] .col-tags').getByRole('button', { name: 'edge' }).click();
    await page.waitForURL((url) => url.search === '?tag=edge&tag=web');
    await expect.poll(() => renderedVmids(page)).toEqual([4201]);
    await page.getByTestId('tag-filter').getByRole('button', { name: 'Remove tag filter edge' }).click();
    await page.waitForURL((url) => url.search === '?tag=web');
    await expect.poll(() => renderedVmids(page)).toEqual([4201, 4202]);

    // Select both rows, bulk edit: a state and a tag added.
    await page.getByRole('checkbox', { name: 'Select web-1' }).check();
    await page.getByRole('checkbox', { name: 'Select web-2' }).check();
    await expect.poll(() => page.getByTestId('selection-bar').textContent()).toContain('2 instances selected');
    await page.getByRole('button', { name: 'Bulk edit' }).click();
    const dialog = page.getByTestId('bulk-edit');
    await dialog.getByLabel('State').selectOption('degraded');
    await dialog.getByLabel('Add tags').fill('blue');
    await dialog.getByRole('button', { name: 'Apply to 2' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'changed' }).textContent()).toBe('2 instances changed.');
    await expect.poll(() => page.locator('tr[data-vmid="4202"] .col-tags .tag').allTextContents()).toEqual(['blue', 'web']);
    for (const vmid of [4201, 4202]) expect((await api().get(`/api/instances/${vmid}`)).body).toMatchObject({ state: 'degraded', tags: expect.arrayContaining(['blue', 'web']) });

    // An edit one instance cannot take: the dialog shows the vmid and field, and nothing changes.
    await page.getByRole('checkbox', { name: 'Select every instance shown' }).check();
    await page.getByRole('button', { name: 'Bulk edit' }).click();
    await dialog.getByLabel('State').selectOption('deployed');
    await dialog.getByLabel('Add tags').fill(Array.from({ length: 14 }, (_, i) => `extra${i}`).join(' '));
    await dialog.getByRole('button', { name: 'Apply to 2' }).click();
    await expect.poll(() => dialog.getByTestId('field-errors').textContent()).toBe('tags: vmid 4201: must hold at most 16 tags');
    await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('Nothing was changed');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await api().get('/api/instances/4202')).body.state).toBe('degraded');

    // Save the view as a collection, and open it.
    await page.getByRole('button', { name: 'Save as collection' }).click();
    const save = page.getByTestId('save-collection');
    await expect.poll(() => save.textContent()).toContain('Matches tag web');
    await save.getByLabel('Name').fill('Web tier');
    await save.getByRole('button', { name: 'Save collection' }).click();
    await page.waitForURL(/\/collections\/\d+$/);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Web tier');
    await expect.poll(() => page.getByTestId('collection-count').textContent()).toBe('2 instances');
    await expect
      .poll(() => page.getByTestId('collection-instances').locator('tr[data-vmid]').evaluateAll((rows) => rows.map((r) => Number((r as HTMLElement).dataset.vmid))))
      .toEqual([4201, 4202]);
    expect(dash.errors).toEqual([]);
  });

  it('lists collections with their counts, edits one, and deletes it after asking', async () => {
    const made = await api().post('/api/collections', { name: 'Databases', filter: { tags: ['db'] } });
    expect(made.status).toBe(201);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/collections');
    await expect.poll(() => page.getByTestId(`count-${made.body.id}`).textContent()).toBe('1 instance');
    await page.getByRole('link', { name: 'Databases' }).click();
    await page.waitForURL(`**/collections/${made.body.id}`);

    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByTestId('collection-form');
    await form.getByLabel('Tags').fill('db, nope!');
    await form.getByRole('button', { name: 'Save collection' }).click();
    await expect.poll(() => form.locator('#collection-tags-error').textContent()).toContain('must be a tag');
    await form.getByLabel('Tags').fill('');
    await form.getByLabel('Stack').selectOption('production');
    await form.getByRole('button', { name: 'Save collection' }).click();
    // Saved when the form closes: the count read "1 instance" before the save too, so it cannot say so.
    await expect.poll(() => form.count()).toBe(0);
    await expect.poll(() => page.getByTestId('collection-count').textContent()).toBe('1 instance');
    expect((await api().get(`/api/collections/${made.body.id}`)).body.filter).toEqual({ stack: 'production' });

    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete Databases' }).click();
    await page.waitForURL((url) => url.pathname === '/collections');
    expect((await api().get(`/api/collections/${made.body.id}`)).status).toBe(404);
    expect(dash.errors).toEqual([]);
  });

  it('a viewer reads collections and what they match, and is offered no selection, bulk edit, save or edit', async () => {
    const made = await api().post('/api/collections', { name: 'Viewer sees this', filter: { tags: ['web'] } });
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/instances?tag=web');
    await expect.poll(() => renderedVmids(page)).toEqual([4201, 4202]);
    expect(await page.getByRole('checkbox', { name: 'Select web-1' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Save as collection' }).count()).toBe(0);
    await page.goto(`/collections/${made.body.id}`);
    await expect.poll(() => page.getByTestId('collection-count').textContent()).toBe('2 instances');
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    expect(dash.errors).toEqual([]);
  });
});
