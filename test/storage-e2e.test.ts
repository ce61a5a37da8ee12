// End to end, host storage and the file cache (PRODUCT.md "Host storage, downloads and the file
// cache"): the built server in its own process, two hosts each running the real bash agent installed
// by the real installer it serves (its own root folder, machine id and node name), with the fake
// pvesh and pvesm of reporter/test/fixtures/agent-bin/ answering from each host's own folder, and an
// administrator in Chromium: a 200 MiB file uploaded through Settings → Files, pushed to both hosts
// from the one cached copy, and a download from a URL onto a storage, which the Storage section
// shows once the agent reports the storage again. Nothing is fetched from the URL: the fake pvesh
// records its arguments.
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumLaunchOptions } from '../build/chromium.mjs';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { TestClient } from './helpers/http.js';
import { until as waitUntil } from './helpers/until.js';
import { installAgent, spawnAgent } from './helpers/real-agent.js';

const root = path.resolve(import.meta.dirname, '..');
const fixtures = path.join(root, 'reporter/test/fixtures');
const SETUP_TOKEN = 'storage-e2e-setup-token-0123456789';
const PASSWORD = 'storage-e2e-password';
const MIB = 2 ** 20;
const ISO = 'homelab-installer-13.1-amd64.iso';
const DOWNLOAD_URL = 'https://cdimage.debian.org/cdimage/archive/12.8.0/amd64/iso-cd/debian-12.8.0-amd64-netinst.iso';
const DOWNLOADED = 'debian-12.8.0-amd64-netinst.iso';
const SHA512 = 'ab'.repeat(64);

interface FakeHost {
  node: string;
  root: string;
  pve: string;
  id: number;
  agent?: ChildProcess;
}

let server: BuiltServer;
let admin: TestClient;
let browser: Browser;
let page: Page;
let dir: string;
let isoPath: string;
let isoSha: string;
const hosts: FakeHost[] = [];
const errors: string[] = [];

const until = <T>(what: string, read: () => Promise<T | undefined | false>, ms = 20_000) => waitUntil(what, read, ms);

const sha256Of = (file: string) =>
  new Promise<string>((resolve, reject) => {
    const hash = createHash('sha256');
    fs.createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });

/** What the fake Proxmox lists as the volumes of a host's storage `local`. */
function listLocal(host: Pick<FakeHost, 'node' | 'pve'>, volumes: { volid: string; size: number }[]) {
  const content = volumes.map((v) => ({ volid: v.volid, content: v.volid.split(':')[1]!.split('/')[0], format: 'iso', size: v.size, ctime: 1_764_000_000 }));
  fs.writeFileSync(path.join(host.pve, `pvesh-${host.node}-storage-local-content.json`), JSON.stringify(content));
}

/** A host: its root folder, and the fake Proxmox's answers (the published storage list; no guests; an empty `local`). */
function makeHost(node: string, machineId: string): Omit<FakeHost, 'id'> {
  const hostRoot = path.join(dir, node, 'root');
  const pve = path.join(dir, node, 'pve');
  for (const d of [path.join(hostRoot, 'etc'), ...['template/iso', 'template/cache', 'snippets', 'import'].map((f) => path.join(pve, 'storage/local', f))]) fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), `${machineId}\n`);
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), `${node}\n`);
  fs.copyFileSync(path.join(fixtures, 'storage/nodes-storage.json'), path.join(pve, `pvesh-${node}-storage.json`));
  for (const type of ['qemu', 'lxc']) fs.writeFileSync(path.join(pve, `pvesh-${node}-${type}.json`), '[]');
  const host = { node, root: hostRoot, pve };
  listLocal(host, []);
  return host;
}

/** Installs the agent with the installer the server serves, and starts it looping. */
async function startAgent(host: Omit<FakeHost, 'id'>): Promise<FakeHost> {
  const env = {
    PATH: `${fixtures}/agent-bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: path.dirname(host.root),
    TMPDIR: path.dirname(host.root),
    FAKE_SYSTEMCTL_LOG: path.join(host.pve, 'systemctl.log'),
    FAKE_PVE_DIR: host.pve,
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
    // A storage's volumes are listed again as soon as a download or push onto it ends.
    HOMEFLEET_VOLUMES_MIN_S: '0',
  };
  const token = (await admin.post('/api/hosts/enrollment-tokens', { name: host.node })).body.token as string;
  await installAgent(server.url, token, host.root, env);
  const agent = spawnAgent(host.root, env);
  const id = await until(`${host.node} to report its storages`, async () => {
    const found = ((await admin.get('/api/hosts')).body as { id: number; hostname: string; status: string }[]).find((h) => h.hostname === host.node && h.status === 'online');
    if (!found) return false;
    const storages = (await admin.get(`/api/hosts/${found.id}/storage`)).body as { storage: string; volumes_at: string | null }[];
    return storages.some((s) => s.storage === 'local' && s.volumes_at) && found.id;
  });
  return { ...host, id, agent };
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-storage-e2e-'));
  // An ISO-sized file of random bytes (nothing compresses or dedupes it on the way). Made before the
  // server starts: made between two requests, it held this process's event loop for longer than the
  // server keeps an idle connection open (5 s under the whole suite), and the next request went out
  // on a connection the server had just closed.
  isoPath = path.join(dir, ISO);
  const out = fs.openSync(isoPath, 'w');
  const hash = createHash('sha256');
  for (let i = 0; i < 200; i++) {
    const chunk = randomBytes(MIB);
    hash.update(chunk);
    fs.writeSync(out, chunk);
  }
  fs.closeSync(out);
  isoSha = hash.digest('hex');

  server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN, { FLEET_HEARTBEAT_INTERVAL_S: '2' }));
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);

  for (const [node, machine] of [
    ['pve-a', 'e2e0123456789abcdef0123456789storea'],
    ['pve-b', 'e2e0123456789abcdef0123456789storeb'],
  ] as const) {
    hosts.push(await startAgent(makeHost(node, machine)));
  }

  browser = await chromium.launch(await chromiumLaunchOptions());
  // Signed in as a second administrator: the test's own client keeps its session.
  const created = await admin.post('/api/users', { username: 'storage-admin', display_name: 'Storage admin', role: 'administrator' });
  const own = new TestClient(server.url);
  await own.post('/api/auth/login', { username: 'storage-admin', password: created.body.temporary_password });
  await own.post('/api/auth/password', { current_password: created.body.temporary_password, new_password: PASSWORD });
  page = await (await browser.newContext({ baseURL: server.url })).newPage();
  page.on('console', (m) => m.type() === 'error' && !/status of 40\d/.test(m.text()) && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/login?next=${encodeURIComponent('/settings')}`);
  await page.getByLabel('Username').fill('storage-admin');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('files').waitFor();
}, 120_000);

afterAll(async () => {
  for (const host of hosts) {
    if (!host.agent?.pid) continue;
    try {
      process.kill(-host.agent.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await browser?.close();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const cacheFiles = () => fs.readdirSync(path.join(dir, 'files'));
const onHost = (host: FakeHost, name: string) => path.join(host.pve, 'storage/local/template/iso', name);

/** The fake pvesh's storage calls of a host, each as its argument list. */
const storageCalls = (host: FakeHost) =>
  fs
    .readFileSync(path.join(host.pve, 'pvesh-storage.log'), 'utf8')
    .split('\n\n')
    .filter((c) => c.trim())
    .map((c) => c.replace(/^\n+/, '').split('\n'));

describe('host storage and the file cache through the real agents, in Chromium', () => {
  it('the Storage section shows each storage the agent reports: type, contents, free space', async () => {
    const [a] = hosts;
    await page.goto(`/hosts/${a!.id}`);
    const storage = page.getByTestId('storage');
    await storage.locator('section[data-storage="truenas-backups"]').waitFor();
    expect(await storage.locator('section.storage').evaluateAll((all) => all.map((s) => s.getAttribute('data-storage')))).toEqual(['local', 'local-lvm', 'truenas-backups']);
    const local = storage.locator('section[data-storage="local"]');
    expect(await local.getByRole('heading').textContent()).toBe('local dir');
    expect(await local.getByTestId('storage-contents').textContent()).toBe('ISO images, disk images to import, backups, container templates, snippets');
    expect(await local.getByTestId('storage-free').textContent()).toBe('81.7 GiB free of 93.9 GiB');
    expect(await local.locator('meter').evaluate((m: HTMLMeterElement) => [m.value, m.max])).toEqual([100_861_726_720 - 87_736_700_928, 100_861_726_720]);
    expect(await storage.locator('section[data-storage="truenas-backups"] .badge').textContent()).toBe('shared');
    // A backup-only storage takes neither downloads nor pushes: no buttons there.
    expect(await storage.locator('section[data-storage="truenas-backups"] button').count()).toBe(0);
    expect(errors).toEqual([]);
  }, 60_000);

  it('an administrator uploads a 200 MiB file through Settings → Files with a moving progress bar (a cancelled upload leaves nothing); it is cached once, by its SHA-256', async () => {
    await page.goto('/settings');
    const files = page.getByTestId('files');
    await files.getByText('The cache is empty.').waitFor();
    await files.getByLabel('Upload a file').setInputFiles(isoPath);
    // Cancel while it goes: said beside the box, and nothing is kept (the server drops the partial file).
    await files.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect.poll(() => files.getByTestId('upload-progress').evaluate((bar: HTMLProgressElement) => bar.value)).toBeGreaterThan(0);
    await files.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(await files.locator('#file-upload-error').textContent()).toBe('The upload was cancelled: nothing was kept.');
    await expect.poll(() => (fs.existsSync(path.join(dir, 'files')) ? cacheFiles() : [])).toEqual([]);
    expect((await admin.get('/api/files')).body.files).toEqual([]);
    // Every value the bar shows, frame by frame, until the upload ends.
    await page.evaluate(() => {
      const seen: number[] = [];
      (window as any).seenProgress = seen;
      const tick = () => {
        const bar = document.querySelector<HTMLProgressElement>('[data-testid="upload-progress"]');
        if (bar && seen.at(-1) !== bar.value) seen.push(bar.value);
        if (!document.querySelector('tr[data-file]')) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await files.getByRole('button', { name: 'Upload', exact: true }).click();
    await files.locator(`tr[data-file="${ISO}"]`).waitFor({ timeout: 90_000 });
    const seen = (await page.evaluate(() => (window as any).seenProgress)) as number[];
    expect(seen.filter((v) => v > 0 && v < 200 * MIB).length, `progress values: ${seen.join(', ')}`).toBeGreaterThanOrEqual(2);
    expect([...seen].sort((x, y) => x - y)).toEqual(seen);

    expect(await files.getByText(`${ISO} is in the cache (SHA-256 ${isoSha.slice(0, 12)}…).`).count()).toBe(1);
    const row = files.locator(`tr[data-file="${ISO}"]`);
    expect(await row.locator('td[data-label="Size"]').textContent()).toBe('200 MiB');
    expect(await row.locator('td[data-label="SHA-256"]').getAttribute('title')).toBe(isoSha);
    expect(await files.getByTestId('cache-used').textContent()).toBe('200 MiB of 50.0 GiB used');
    expect(cacheFiles()).toEqual([isoSha]);
    expect(await sha256Of(path.join(dir, 'files', isoSha))).toBe(isoSha);
    expect(errors).toEqual([]);
  }, 120_000);

  it('the file is pushed to two hosts, from Settings → Files and from a host’s Storage section: both get the same bytes from the one cached copy', async () => {
    const [a, b] = hosts as [FakeHost, FakeHost];
    const { files } = (await admin.get('/api/files')).body as { files: { id: number; name: string }[] };
    const fileId = files.find((f) => f.name === ISO)!.id;

    await page.goto('/settings');
    await page.locator(`tr[data-file="${ISO}"]`).getByRole('button', { name: 'Push to host…' }).click();
    let dialog = page.getByTestId('push-dialog');
    await dialog.getByLabel('Host', { exact: true }).selectOption({ label: 'pve-a' });
    // Only the storage that holds what a push may put there; the content the name suggests.
    await expect.poll(() => dialog.getByLabel('Storage', { exact: true }).locator('option').allTextContents()).toEqual(['local']);
    expect(await dialog.getByLabel('Content', { exact: true }).inputValue()).toBe('iso');
    await dialog.getByRole('button', { name: 'Push', exact: true }).click();
    await dialog.locator('[data-testid="transfer-status"][data-status="succeeded"]').waitFor({ timeout: 90_000 });
    expect(await dialog.getByTestId('transfer-done').textContent()).toContain(`local:iso/${ISO}`);
    await dialog.getByRole('button', { name: 'Close', exact: true }).first().click();

    await page.goto(`/hosts/${b.id}`);
    await page.locator('section[data-storage="local"]').getByRole('button', { name: 'Push a cached file…' }).click();
    dialog = page.getByTestId('push-dialog');
    await expect.poll(() => dialog.getByLabel('File', { exact: true }).locator('option').count()).toBe(2);
    await dialog.getByLabel('File', { exact: true }).selectOption(String(fileId));
    expect(await dialog.getByLabel('Content', { exact: true }).inputValue()).toBe('iso');
    await dialog.getByRole('button', { name: 'Push', exact: true }).click();
    await dialog.locator('[data-testid="transfer-status"][data-status="succeeded"]').waitFor({ timeout: 90_000 });

    for (const host of [a, b]) {
      expect(await sha256Of(onHost(host, ISO)), host.node).toBe(isoSha);
      // The agent's temp files are gone: only the file, renamed into place.
      expect(fs.readdirSync(path.dirname(onHost(host, ISO))), host.node).toEqual([ISO]);
    }
    // One cached copy served both: the same file id in both operations, one file in the cache folder.
    const pushes = await Promise.all([a, b].map(async (h) => ((await admin.get(`/api/operations?host_id=${h.id}`)).body as { type: string; status: string; params: { file_id?: number } }[]).filter((o) => o.type === 'upload')));
    expect(pushes.map((list) => list.map((o) => [o.status, o.params.file_id]))).toEqual([[['succeeded', fileId]], [['succeeded', fileId]]]);
    expect(cacheFiles()).toEqual([isoSha]);
    expect(errors).toEqual([]);
  }, 180_000);

  it('a download from a URL runs pvesh download-url with exactly the given values, and the Storage section shows the new volume after the next report', async () => {
    const [a] = hosts as [FakeHost];
    await page.goto(`/hosts/${a.id}`);
    const local = page.locator('section[data-storage="local"]');
    await local.locator(`tr[data-volid="local:iso/${DOWNLOADED}"]`).waitFor({ state: 'detached' });
    await local.getByRole('button', { name: 'Download from URL…' }).click();
    const dialog = page.getByTestId('download-dialog');
    await dialog.getByLabel('URL', { exact: true }).fill(DOWNLOAD_URL);
    // The name follows the URL's last segment; the content is what that name suggests among what local holds.
    expect(await dialog.getByLabel('File name', { exact: true }).inputValue()).toBe(DOWNLOADED);
    expect(await dialog.getByLabel('Content', { exact: true }).locator('option').allTextContents()).toEqual(['iso (ISO images)', 'vztmpl (container templates)', 'import (disk images to import)']);
    expect(await dialog.getByLabel('Content', { exact: true }).inputValue()).toBe('iso');

    // A wrong field is said beside its box, and nothing is asked of the host.
    await dialog.getByLabel('Checksum (optional)').fill('abc123');
    await dialog.getByRole('button', { name: 'Download', exact: true }).click();
    expect(await dialog.locator('#download-checksum-error').textContent()).toBe('a SHA-256 has 64 hex digits; this has 6');

    // Proxmox would now list the downloaded file and the pushed one: the agent reads that listing
    // once the download ends (its storage changed) and sends it with its next report.
    listLocal(a, [
      { volid: `local:iso/${DOWNLOADED}`, size: 661_651_456 },
      { volid: `local:iso/${ISO}`, size: 200 * MIB },
    ]);
    await dialog.getByLabel('Checksum (optional)').fill(SHA512);
    expect(await dialog.getByLabel('Algorithm', { exact: true }).inputValue()).toBe('sha512');
    await dialog.getByRole('button', { name: 'Download', exact: true }).click();
    await dialog.locator('[data-testid="transfer-status"][data-status="succeeded"]').waitFor({ timeout: 30_000 });
    expect(storageCalls(a).filter((c) => c[0] === 'create')).toEqual([
      ['create', '/nodes/pve-a/storage/local/download-url', '--url', DOWNLOAD_URL, '--filename', DOWNLOADED, '--content', 'iso', '--checksum', SHA512, '--checksum-algorithm', 'sha512'],
    ]);
    await dialog.getByRole('button', { name: 'Close', exact: true }).first().click();

    // No reload: the section reads the storage again on the host's heartbeats.
    const row = local.locator(`tr[data-volid="local:iso/${DOWNLOADED}"]`);
    await row.waitFor({ timeout: 20_000 });
    expect(await row.locator('td').allTextContents()).toEqual([DOWNLOADED, 'iso', '631 MiB', expect.any(String)]);
    expect(await local.locator(`tr[data-volid="local:iso/${ISO}"] td[data-label="Size"]`).textContent()).toBe('200 MiB');
    expect(errors).toEqual([]);
  }, 90_000);
});
