// End to end, guest control: the built server in its own process, the real installer it serves and
// the real bash agent looping (heartbeats and the command poll) with fake qm/pct on PATH, and an
// operator in Chromium acting on the host page.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { heldPosts } from './helpers/hosts.js';
import { TestClient } from './helpers/http.js';
import { closeContexts, sharedBrowser } from './e2e/helpers.js';
import { until as waitUntil } from './helpers/until.js';
import { installAgent, spawnAgent } from './helpers/real-agent.js';

const root = path.resolve(import.meta.dirname, '..');
const fakeBin = path.join(root, 'reporter/test/fixtures/agent-bin');
const SETUP_TOKEN = 'guests-e2e-setup-token-0123456789';
const PASSWORD = 'guests-e2e-password';

let server: BuiltServer;
let admin: TestClient;
let browser: Browser;
let agent: ChildProcess | undefined;
let dir: string;
let hostRoot: string;
let pveDir: string;
let pveLog: string;
let hostId: number;
const errors: string[] = [];

const until = <T>(what: string, read: () => Promise<T | undefined | false>, ms = 15_000) => waitUntil(what, read, ms);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-guests-e2e-'));
  hostRoot = path.join(dir, 'root');
  pveDir = path.join(dir, 'pve');
  pveLog = path.join(dir, 'pve.log');
  fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
  fs.mkdirSync(pveDir);
  fs.writeFileSync(pveLog, '');
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), 'e2e0123456789abcdef0123456789guest\n');
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), 'pve-guests\n');
  fs.writeFileSync(path.join(pveDir, 'config-100'), 'boot: order=scsi0\ncipassword: secret-pass\nmemory: 2048\nname: web\n');

  server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN, { FLEET_HEARTBEAT_INTERVAL_S: '2' }));
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);

  const env = {
    PATH: `${fakeBin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: dir,
    TMPDIR: dir,
    FAKE_SYSTEMCTL_LOG: path.join(dir, 'systemctl.log'),
    FAKE_PVE_DIR: pveDir,
    FAKE_PVE_LOG: pveLog,
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
  };
  const token = (await admin.post('/api/hosts/enrollment-tokens', { name: 'e2e' })).body.token as string;
  await installAgent(server.url, token, hostRoot, env);
  // The installed agent as its systemd service runs it: looping, in its own process group.
  agent = spawnAgent(hostRoot, env);
  hostId = await until('the host to report its guests', async () => {
    const [host] = (await admin.get('/api/hosts')).body;
    return host?.status === 'online' && host.guest_count === 4 && (host.id as number);
  });
  browser = await sharedBrowser();
}, 60_000);

afterAll(async () => {
  if (agent?.pid) {
    try {
      process.kill(-agent.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await closeContexts();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function signedInPage(role: 'operator' | 'viewer', goTo: string): Promise<Page> {
  const username = `${role}-e2e`;
  const created = await admin.post('/api/users', { username, display_name: role, role });
  const own = new TestClient(server.url);
  await own.post('/api/auth/login', { username, password: created.body.temporary_password });
  await own.post('/api/auth/password', { current_password: created.body.temporary_password, new_password: PASSWORD });
  const page = await (await browser.newContext({ baseURL: server.url })).newPage();
  page.on('console', (m) => m.type() === 'error' && !/status of 40\d/.test(m.text()) && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/login?next=${encodeURIComponent(goTo)}`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`**${goTo}`);
  return page;
}

const pveCalls = () => fs.readFileSync(pveLog, 'utf8').split('\n').filter(Boolean);

describe('an operator acts on guests through the real agent', () => {
  it('stop reaches qm and shows succeeded within 3 s without a reload; clone creates the instance; destroy removes it; a config change shows as a diff', async () => {
    const page = await signedInPage('operator', `/hosts/${hostId}`);
    // A guest's action menu, and the dialog an action opens.
    const choose = async (vmid: number, item: string) => {
      await page.locator(`#guest-menu-${vmid}-button`).click();
      await page.locator(`#guest-menu-${vmid}`).getByRole('menuitem', { name: item }).click();
    };
    const dialog = page.locator('dialog[open]');
    await page.locator('#guest-menu-100-button').waitFor();
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    // Stop: confirmed naming the guest, run by the agent as `qm stop 100`.
    await choose(100, 'Stop…');
    const clicked = Date.now();
    await dialog.getByRole('button', { name: 'Stop 100 “web”' }).click();
    await page.locator('[data-testid="guest-op-100"]', { hasText: 'stop' }).locator('[data-status="succeeded"]').waitFor({ timeout: 3000 });
    expect(Date.now() - clicked).toBeLessThan(3000);
    expect(pveCalls()).toContain('qm stop 100 ');
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // Clone: the new instance exists with the operation, and stays when the clone succeeds.
    await choose(100, 'Clone…');
    await dialog.getByLabel('New VMID').fill('300');
    await dialog.getByLabel('New name').fill('web-copy');
    await dialog.getByRole('button', { name: 'Clone 100 “web”' }).click();
    await page.locator('[data-testid="guest-op-100"]', { hasText: 'clone' }).locator('[data-status="succeeded"]').waitFor({ timeout: 5000 });
    expect(pveCalls()).toContain('qm clone 100 300 --name web-copy --full 1 ');
    expect((await admin.get('/api/instances/300')).body).toMatchObject({ name: 'web-copy', state: 'testing', stack: 'development' });

    // Destroy: a stopped guest on the development stack, confirmed by typing its name; its instance goes.
    expect((await admin.post('/api/instances', { vmid: 101, name: 'build-runner', state: 'testing', stack: 'development' })).status).toBe(201);
    await choose(101, 'Destroy…');
    const destroy = dialog.getByRole('button', { name: 'Destroy 101 “build-runner”' });
    expect(await destroy.isDisabled()).toBe(true);
    await dialog.getByLabel("Type the guest's name").fill('build-runner');
    await destroy.click();
    await page.locator('[data-testid="guest-op-101"] [data-status="succeeded"]').waitFor({ timeout: 5000 });
    expect(pveCalls()).toContain('qm destroy 101 ');
    await until('the instance to be removed', async () => (await admin.get('/api/instances/101')).status === 404);

    // A config change: the agent uploads the new version (redacted) and the page shows the diff.
    fs.writeFileSync(path.join(pveDir, 'config-100'), 'boot: order=scsi0\ncipassword: secret-pass\nmemory: 4096\nname: web\n');
    await until('a second config version', async () => (await admin.get(`/api/hosts/${hostId}/guests/100/configs`)).body.length === 2);
    await choose(100, 'Config history…');
    await page.locator('[data-testid="configs-100"]').getByRole('button', { name: 'diff' }).click();
    const diff = await page.locator('[data-testid="config-view"]').textContent();
    expect(diff).toContain('-memory: 2048');
    expect(diff).toContain('+memory: 4096');
    expect(diff).not.toContain('secret-pass');

    // The operations list kept the history, live.
    expect(await page.locator('[data-testid="operations"] [data-status="succeeded"]').count()).toBeGreaterThanOrEqual(3);
    expect(errors).toEqual([]);
  }, 60_000);

  it('parallel requests for one guest give exactly one operation', async () => {
    const answers = await heldPosts(server.url, `/api/hosts/${hostId}/guests/201/actions`, { cookie: admin.cookieHeader(), origin: server.url }, Array(10).fill({ action: 'start' }));
    expect(answers.map((a) => a.status).sort()).toEqual([202, ...Array(9).fill(409)]);
    const id = answers.find((a) => a.status === 202)!.body.operation_id;
    await until('the start to succeed', async () => (await admin.get(`/api/operations/${id}`)).body.status === 'succeeded');
    expect((await admin.get(`/api/operations?host_id=${hostId}&vmid=201`)).body).toHaveLength(1);
    expect(pveCalls().filter((c) => c === 'pct start 201 ')).toHaveLength(1);
  });

  it('a viewer sees statuses but no actions or output; the instances list shows where each runs and which no host reports', async () => {
    for (const [vmid, name] of [[555, 'nowhere'], [100, 'web']] as const) {
      expect((await admin.post('/api/instances', { vmid, name, state: 'testing', stack: 'development' })).status).toBe(201);
    }
    const page = await signedInPage('viewer', `/hosts/${hostId}`);
    await page.locator('[data-testid="guest-op-100"] [data-status="succeeded"]').waitFor();
    expect(await page.locator('[data-testid="guests"] button').count()).toBe(0);
    expect(await page.locator('[data-testid="operations"] button').count()).toBe(0);

    await page.goto('/instances/100');
    await page.locator('[data-testid="runs-on"]', { hasText: 'pve-guests' }).waitFor();
    expect(await page.locator('[data-testid="runs-on"]').textContent()).toBe('pve-guests (running)');

    await page.goto('/instances');
    await page.locator('tr[data-vmid="100"]').waitFor();
    expect(await page.locator('tr[data-vmid="100"] .col-host').textContent()).toBe('pve-guests running');
    await page.getByLabel('not reported by any host').check();
    await page.waitForURL('**/instances?host_id=none');
    // 300 was cloned, but the fake qm never lists it: no host reports it either. (Polled: the list
    // before the filter stays on screen until the filtered one arrives.)
    await expect.poll(() => page.locator('tr[data-vmid]').evaluateAll((rows) => rows.map((r) => Number((r as HTMLElement).dataset.vmid)).sort())).toEqual([300, 555]);
    expect(errors).toEqual([]);
  }, 30_000);

  it('an administrator sets a maintenance window; outside it a stop needs force, which the administrator can give', async () => {
    const page = await (await browser.newContext({ baseURL: server.url })).newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`/login?next=${encodeURIComponent(`/hosts/${hostId}`)}`);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`**/hosts/${hostId}`);

    // A window two days from now: closed whenever this runs.
    const day = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][(new Date().getUTCDay() + 2) % 7]!;
    const card = page.locator('[data-testid="maintenance"]');
    await card.getByRole('button', { name: 'Edit maintenance…' }).click();
    await card.getByLabel(/Windows, one a line/).fill(`${day} 02:00-04:00`);
    await card.getByLabel('Time zone').fill('UTC');
    await card.getByRole('button', { name: 'Save' }).click();
    await card.getByText('outside every window').waitFor();
    // The administrator's own session (signing in here ended the test client's, one session per account).
    const read = (url: string) => page.evaluate(async (u) => (await fetch(u)).json(), url);
    expect(await read(`/api/hosts/${hostId}/maintenance`)).toMatchObject({ windows: [{ days: [day], start: '02:00', end: '04:00' }], timezone: 'UTC', window_open: false });

    await page.locator('#guest-menu-200-button').click();
    await page.getByRole('menuitem', { name: 'Stop…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Stop 200 “db”' });
    await dialog.getByRole('button', { name: 'Stop 200 “db”' }).click();
    await dialog.getByText("Outside the host's maintenance window.").waitFor();
    await dialog.getByLabel('force outside the maintenance window').check();
    await dialog.getByRole('button', { name: 'Stop 200 “db”' }).click();
    await page.locator('[data-testid="guest-op-200"] [data-status="succeeded"]').waitFor({ timeout: 5000 });
    expect(pveCalls()).toContain('pct stop 200 ');
    const audit = (await read('/api/audit?limit=50')) as { action: string; detail: Record<string, unknown> }[];
    expect(audit.find((e) => e.action === 'host.guest_action_forced')).toMatchObject({ detail: { vmid: 200, action: 'stop', force: true } });
    expect(errors).toEqual([]);
  }, 30_000);
});
