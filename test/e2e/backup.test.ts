import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeTempDbs, tempDbPath } from '../helpers/tempdb.js';
import { renderedVmids, seedInstances, signIn, startDashboard, type Dashboard } from './helpers.js';

// Needs the backup routes (branch `jobs`): written to registry-service.md's Backup section.
describe('export and import in Chromium', () => {
  let dash: Dashboard;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-e2e-backup-'));
  beforeAll(async () => {
    // A database file, so the page has snapshots to show.
    dash = await startDashboard({ dbPath: tempDbPath() });
    await seedInstances(dash.server, [
      { vmid: 701, name: 'exported-one', state: 'deployed', stack: 'development' },
      { vmid: 702, name: 'exported-two', state: 'testing', stack: 'production' },
    ]);
  });
  afterAll(async () => {
    await dash?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    removeTempDbs();
  });

  it('exports a download, previews an import with its counts and replaces the registry only after confirmation', async () => {
    const page = await dash.newPage({ acceptDownloads: true });
    await signIn(page, dash.server, 'administrator', '/settings');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download backup' }).click()]);
    const exported = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
    expect(exported.version).toBe(3);
    expect(exported.instances.map((i: { vmid: number }) => i.vmid).sort()).toEqual([701, 702]);
    const own = path.join(dir, 'own-export.json');
    fs.writeFileSync(own, JSON.stringify(exported));
    await page.getByLabel('Backup file').setInputFiles(own);
    await expect.poll(() => page.getByTestId('preview-history').textContent()).toBe('2 entries, restored as they were');

    const backup = path.join(dir, 'old-backup.json');
    fs.writeFileSync(
      backup,
      JSON.stringify({
        version: 2,
        exported_at: '2025-01-01T00:00:00Z',
        instances: [
          { vmid: 801, name: 'restored-a', state: 'deployed', stack: 'development', tailscale_ip: '', created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' },
          { vmid: 802, name: 'restored-b', state: 'degraded', stack: 'production', tailscale_ip: '', created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' },
          { vmid: 803, name: 'restored-c', state: 'testing', stack: 'development', tailscale_ip: '', created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' },
        ],
      }),
    );
    await page.getByLabel('Backup file').setInputFiles(backup);
    const preview = page.getByTestId('import-preview');
    await expect.poll(() => preview.isVisible()).toBe(true);
    await expect.poll(() => page.getByTestId('preview-instances').textContent()).toBe('3');
    await expect.poll(() => page.getByTestId('preview-jobs').textContent()).toBe('not in this file (kept)');
    await expect.poll(() => page.getByTestId('preview-history').textContent()).toBe('not in this file (each instance starts with one "imported" entry)');
    expect(await preview.textContent()).toContain('Backup version2');
    // Nothing is replaced by choosing the file.
    expect(((await dash.server.client.get('/api/instances')).body as unknown[]).length).toBe(2);
    // Not "cannot be undone": a snapshot is taken first, and the warning says so.
    await expect.poll(() => preview.locator('.notice-warning').textContent()).toContain('A snapshot of the whole database is taken first');
    expect(await preview.textContent()).not.toContain('cannot be undone');

    const listed = page.getByTestId('snapshot-list').locator('tbody tr');
    const before = await listed.count();
    await page.getByRole('button', { name: 'Replace registry with this backup' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Imported' }).textContent()).toBe(
      'Imported 3 instances from old-backup.json. What it replaced is kept in a pre-import snapshot below.',
    );
    // The list shows the pre-import snapshot without a reload.
    await expect.poll(() => listed.count(), { timeout: 10_000 }).toBe(before + 1);
    expect(await listed.first().textContent()).toContain('before an import');
    await page.goto('/instances');
    await expect.poll(() => renderedVmids(page)).toEqual([801, 802, 803]);
  });

  it('a file that is not a backup is refused before anything is sent', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/settings');
    const bad = path.join(dir, 'notes.json');
    fs.writeFileSync(bad, 'this is not json');
    await page.getByLabel('Backup file').setInputFiles(bad);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not JSON');
    await expect.poll(() => page.getByTestId('import-preview').count()).toBe(0);
  });

  it('an invalid row is refused by the server with its message and nothing changes', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', '/settings');
    const invalid = path.join(dir, 'invalid.json');
    fs.writeFileSync(invalid, JSON.stringify({ version: 3, instances: [{ vmid: -1, name: 'x', state: 'deployed', stack: 'development' }] }));
    await page.getByLabel('Backup file').setInputFiles(invalid);
    await page.getByRole('button', { name: 'Replace registry with this backup' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(
      'Import refused: instances[0] (vmid -1, "x"): vmid must be a positive integer. Nothing was changed.',
    );
    expect(((await dash.server.client.get('/api/instances')).body as unknown[]).length).toBe(3);
  });

  it('lists the database snapshots with time and size, takes one now and downloads it', async () => {
    const page = await dash.newPage({ acceptDownloads: true });
    await signIn(page, dash.server, 'administrator', '/settings');
    const card = page.getByTestId('snapshots');
    // The import above took one before it wrote.
    await expect.poll(() => card.getByRole('row').count()).toBeGreaterThanOrEqual(2);
    expect(await card.textContent()).toContain('before an import');
    await expect.poll(() => page.getByTestId('snapshot-policy').textContent()).toMatch(/^Taken every 24 hours and before every import, into .*snapshots\. Kept: the last 7 scheduled/);
    const rowsBefore = await card.getByRole('row').count();
    await card.getByRole('button', { name: 'Take a snapshot now' }).click();
    await expect.poll(() => card.getByRole('status').textContent()).toMatch(/^Snapshot homefleet-.*-manual(-\d+)?\.db taken \(\d+(\.\d)? KiB\)\.$/);
    await expect.poll(() => card.getByRole('row').count()).toBe(rowsBefore + 1);
    expect(await card.getByRole('row').nth(1).textContent()).toMatch(/taken by hand\d+(\.\d)? KiBDownload$/);
    // At 1280 px every Download link is inside the card, not cut off.
    const cardBox = (await card.boundingBox())!;
    for (const link of await card.getByRole('link', { name: 'Download' }).all()) {
      const box = (await link.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(cardBox.x + cardBox.width);
    }
    const [download] = await Promise.all([page.waitForEvent('download'), card.getByRole('link', { name: 'Download' }).first().click()]);
    expect(download.suggestedFilename()).toMatch(/^homefleet-.*-manual(-\d+)?\.db$/);
    expect(fs.readFileSync((await download.path())!).subarray(0, 15).toString()).toBe('SQLite format 3');
  });

  it('ran without script errors or Content-Security-Policy violations', () => {
    expect(dash.errors).toEqual([]);
  });
});
