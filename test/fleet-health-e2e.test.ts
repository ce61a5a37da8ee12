// End to end, fleet health (PRODUCT.md "Fleet health: policies across every source"): the built server
// in its own process, two hosts each running the real bash agent installed by the real installer it
// serves, with the fake pvesh of reporter/test/fixtures/agent-bin/ answering real-shaped backup jobs
// (`all` with `exclude`, a disabled job) and backup volumes (one failed verification); a webhook
// receiver on loopback; an administrator in Chromium. The Fleet health page shows every cell with its
// reason; one host stopped raises one host.offline alert and notification naming its three guests and
// no guest.down or policy.failed for them (whose for_s would have passed); the host back resolves it.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumLaunchOptions } from '../build/chromium.mjs';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { TestClient } from './helpers/http.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { until } from './helpers/until.js';
import { installAgent, spawnAgent } from './helpers/real-agent.js';

const root = path.resolve(import.meta.dirname, '..');
const fixtures = path.join(root, 'reporter/test/fixtures');
const SETUP_TOKEN = 'fleet-e2e-setup-token-0123456789ab';
const PASSWORD = 'fleet-e2e-password';
const NOW_S = Math.floor(Date.now() / 1000);

interface FakeHost {
  node: string;
  root: string;
  pve: string;
  env: Record<string, string>;
  id: number;
  agent?: ChildProcess;
}

let server: BuiltServer;
let admin: TestClient;
let receiver: Receiver;
let browser: Browser;
let page: Page;
let dir: string;
const hosts: FakeHost[] = [];
const errors: string[] = [];

const backup = (node: string, vmid: number, hoursAgo: number, verification?: 'ok' | 'failed') => ({
  content: 'backup',
  ctime: NOW_S - hoursAgo * 3600,
  format: 'pbs-vm',
  size: 4_294_967_296,
  subtype: 'qemu',
  vmid,
  volid: `truenas-backups:backup/vm/${vmid}/${new Date((NOW_S - hoursAgo * 3600) * 1000).toISOString().slice(0, 19)}Z`,
  ...(verification ? { verification: { state: verification, upid: `UPID:${node}:0000A1B2:00C3D4E5:66F1A2B3:verify:truenas-backups:root@pam:` } } : {}),
});

/** A host's root folder and the fake Proxmox's answers: its guests, the published storage list, the cluster's backup jobs and its backups. */
function makeHost(node: string, machineId: string, guests: object[], backups: object[]): Omit<FakeHost, 'id'> {
  const hostRoot = path.join(dir, node, 'root');
  const pve = path.join(dir, node, 'pve');
  fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
  fs.mkdirSync(pve, { recursive: true });
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), `${machineId}\n`);
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), `${node}\n`);
  fs.copyFileSync(path.join(fixtures, 'storage/nodes-storage.json'), path.join(pve, `pvesh-${node}-storage.json`));
  fs.writeFileSync(path.join(pve, `pvesh-${node}-qemu.json`), JSON.stringify(guests));
  fs.writeFileSync(path.join(pve, `pvesh-${node}-lxc.json`), '[]');
  fs.writeFileSync(path.join(pve, `pvesh-${node}-storage-local-content.json`), '[]');
  fs.writeFileSync(path.join(pve, `pvesh-${node}-storage-truenas-backups-content.json`), JSON.stringify(backups));
  // The cluster's jobs, as /cluster/backup lists them (the shape of reporter/test/fixtures/backups/cluster-backup.json).
  fs.writeFileSync(
    path.join(pve, 'pvesh-cluster-backup.json'),
    JSON.stringify([
      { all: 1, compress: 'zstd', enabled: 1, exclude: '102', id: 'backup-nightly', mode: 'snapshot', schedule: '02:00', storage: 'truenas-backups', type: 'vzdump' },
      { compress: 'zstd', enabled: 0, id: 'backup-cache', mode: 'snapshot', schedule: 'sun 03:00', storage: 'truenas-backups', type: 'vzdump', vmid: '102' },
    ]),
  );
  const env = {
    PATH: `${fixtures}/agent-bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: path.dirname(hostRoot),
    TMPDIR: path.dirname(hostRoot),
    FAKE_SYSTEMCTL_LOG: path.join(pve, 'systemctl.log'),
    FAKE_PVE_DIR: pve,
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
  };
  return { node, root: hostRoot, pve, env };
}

const runAgent = (host: Omit<FakeHost, 'id'>) =>
  spawnAgent(host.root, host.env);

function stopAgent(host: FakeHost) {
  if (!host.agent?.pid) return;
  try {
    process.kill(-host.agent.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  host.agent = undefined;
}

/** Installs the agent with the installer the server serves, starts it looping, and waits for its backups. */
async function startAgent(host: Omit<FakeHost, 'id'>, vmid: number): Promise<FakeHost> {
  const token = (await admin.post('/api/hosts/enrollment-tokens', { name: host.node })).body.token as string;
  await installAgent(server.url, token, host.root, host.env);
  const agent = runAgent(host);
  const id = await until(`${host.node} to report its backups`, async () => {
    const found = ((await admin.get('/api/hosts')).body as { id: number; hostname: string; status: string }[]).find((h) => h.hostname === host.node && h.status === 'online');
    return found && ((await admin.get(`/api/instances/${vmid}/backups`)).body as unknown[]).length > 0 && found.id;
  });
  return { ...host, id, agent };
}

const alerts = async (status: 'firing' | 'resolved') => (await admin.get(`/api/alerts?status=${status}&limit=1000`)).body as { rule: string; subject: { type: string; id: string }; message: string }[];
const notified = (rule: string, event: string) => receiver.received.map((r) => JSON.parse(r.body)).filter((b) => b.event === event && b.alert?.rule === rule);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-fleet-e2e-'));
  receiver = await startReceiver();
  // Offline after 6 s of silence (three intervals: a loaded machine's agent may be a second late); the alert rules run every 2 s.
  server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN, { FLEET_HEARTBEAT_INTERVAL_S: '2' }));
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
  for (const [vmid, name] of [[100, 'web'], [101, 'db'], [102, 'cache'], [200, 'mail']] as const) {
    expect((await admin.post('/api/instances', { vmid, name, state: 'deployed', stack: 'production' })).status).toBe(201);
  }
  expect((await admin.post('/api/notifications/channels', { name: 'hook', type: 'webhook', config: { url: `${receiver.url}/hook` }, rules: 'all', min_severity: 'info' })).status).toBe(201);
  // Short waits, so that a guest.down or policy.failed that should not fire would have, within the test.
  expect((await admin.put('/api/alerts/rules/guest.down', { for_s: 6 })).status).toBe(200);
  expect((await admin.put('/api/alerts/rules/policy.failed', { for_s: 6 })).status).toBe(200);

  const a = makeHost(
    'pve-a',
    'e2e0123456789abcdef0123456789fleeta',
    [
      { vmid: 100, name: 'web', status: 'running' },
      { vmid: 101, name: 'db', status: 'stopped' },
      { vmid: 102, name: 'cache', status: 'running' },
    ],
    [backup('pve-a', 100, 3, 'ok'), backup('pve-a', 100, 27, 'ok'), backup('pve-a', 101, 50), backup('pve-a', 102, 1, 'failed')],
  );
  const b = makeHost('pve-b', 'e2e0123456789abcdef0123456789fleetb', [{ vmid: 200, name: 'mail', status: 'running' }], [backup('pve-b', 200, 2, 'ok')]);
  hosts.push(await startAgent(a, 100), await startAgent(b, 200));

  browser = await chromium.launch(await chromiumLaunchOptions());
  page = await (await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 800 } })).newPage();
  page.on('console', (m) => m.type() === 'error' && !/status of 40\d/.test(m.text()) && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  const created = await admin.post('/api/users', { username: 'fleet-admin', display_name: 'Fleet admin', role: 'administrator' });
  const own = new TestClient(server.url);
  await own.post('/api/auth/login', { username: 'fleet-admin', password: created.body.temporary_password });
  await own.post('/api/auth/password', { current_password: created.body.temporary_password, new_password: PASSWORD });
  await page.goto(`/login?next=${encodeURIComponent('/health')}`);
  await page.getByLabel('Username').fill('fleet-admin');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('fleet-health').waitFor();
}, 120_000);

afterAll(async () => {
  for (const host of hosts) stopAgent(host);
  await browser?.close();
  await server?.stop();
  await receiver?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Each row's cells as the page shows them: `result: reason` from the cell's hover text. */
const table = () =>
  page.getByTestId('fleet-health').evaluate((t) =>
    Object.fromEntries(
      [...t.querySelectorAll('tbody tr[data-vmid]')].map((tr) => [
        tr.getAttribute('data-vmid'),
        [...tr.querySelectorAll('td[data-result]')].map((td) => `${td.getAttribute('data-result')}: ${td.getAttribute('title')}`),
      ]),
    ),
  );

describe('fleet health with real agents, in Chromium', () => {
  it('the page shows each instance’s cells and reasons, failing first, and a row’s detail', async () => {
    await page.reload();
    await page.getByTestId('fleet-health').waitFor();
    expect(await page.locator('thead th').allTextContents()).toEqual(['Instance', 'Host', 'Running', 'In a backup job', 'Backed up']);
    expect(await table()).toEqual({
      101: ['fail: guest is stopped', 'pass: in backup job backup-nightly (02:00)', 'fail: last backup 2 days ago'],
      102: ['pass: running', 'fail: not in any enabled backup job (backup job backup-cache is disabled)', 'fail: no backup that passed verification (the newest failed it)'],
      100: ['pass: running', 'pass: in backup job backup-nightly (02:00)', 'pass: last backup 3 h ago'],
      200: ['pass: running', 'pass: in backup job backup-nightly (02:00)', 'pass: last backup 2 h ago'],
    });
    expect(await page.locator('tbody tr[data-vmid]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-vmid')))).toEqual(['101', '102', '100', '200']);
    await page.locator('tr[data-vmid="102"]').click();
    const detail = page.locator('tr[data-detail="102"]');
    expect(await detail.locator('dd[data-check="in_backup_job"]').textContent()).toBe('fail not in any enabled backup job (backup job backup-cache is disabled)');
    if (process.env.FLEET_HEALTH_SCREENSHOT) await page.screenshot({ path: process.env.FLEET_HEALTH_SCREENSHOT, fullPage: true });
    // Only failing instances.
    await page.getByLabel('Only failing instances').check();
    await page.waitForURL(/failing=true/);
    await until('the failing view', async () => JSON.stringify(Object.keys(await table())) === JSON.stringify(['101', '102']));
    // One collection's instances (s40-tags' saved filters), kept in the URL with the failing filter off.
    const made = await admin.post('/api/collections', { name: 'mail servers', filter: { search: 'mail' } });
    expect(made.status, made.text).toBe(201);
    await page.getByLabel('Only failing instances').uncheck();
    await page.reload();
    await page.getByLabel('Collection').selectOption({ label: 'mail servers (1)' });
    await page.waitForURL(new RegExp(`collection_id=${made.body.id}`));
    await until('the collection view', async () => JSON.stringify(Object.keys(await table())) === JSON.stringify(['200']));
        // The instance page lists the guest's backups newest first, with the failed verification.
    await page.goto('/instances/102');
    const row = page.getByTestId('instance-backups').locator('tbody tr');
    await row.first().waitFor();
    expect(await row.locator('td').nth(3).textContent()).toBe('failed');
    expect(errors).toEqual([]);
  });

  it('backup.failed fires for the failed verification and is notified', async () => {
    await until('backup.failed', async () => (await alerts('firing')).some((a) => a.rule === 'backup.failed' && a.subject.id.includes('/vm/102/')));
    await until('its notification', async () => notified('backup.failed', 'alert.firing').length === 1);
  });

  it('a host stopped: one host.offline naming its three guests, notified; no guest.down or policy.failed for them; back: resolved', { timeout: 60_000 }, async () => {
    const [a] = hosts;
    // 101 (stopped) and 102 fired guest.down and policy.failed while pve-a beat: they stay as they are.
    await until('the alerts of pve-a’s guests while it beats', async () => (await alerts('firing')).filter((x) => x.rule === 'policy.failed').length === 2);
    const before = new Set((await alerts('firing')).map((x) => `${x.rule} ${x.subject.id}`));
    // Their notifications leave on the delivery queue's own turn: counted from here, a late one of
    // theirs would read as fired while the host is away.
    const delivered = () => new Set(receiver.received.map((r) => JSON.parse(r.body)).filter((n) => n.event === 'alert.firing').map((n) => `${n.alert.rule} ${n.alert.subject.id}`));
    await until('the notifications of the alerts firing before', async () => [...before].every((k) => delivered().has(k)));
    const sentBefore = receiver.received.length;
    stopAgent(a!);
    const offline = await until('host.offline', async () => (await alerts('firing')).find((x) => x.rule === 'host.offline'));
    expect(offline.message).toMatch(/^pve-a has sent no heartbeat for \d+ s; it affects 3 guests: 100 “web”, 101 “db”, 102 “cache”$/);
    const sent = await until('the host.offline notification', async () => notified('host.offline', 'alert.firing')[0]);
    expect(sent.alert.message).toBe(offline.message);
    // guest.down and policy.failed wait 6 s: past that, none fired for pve-a's guests.
    await new Promise((r) => setTimeout(r, 9_000));
    const firing = await alerts('firing');
    const added = firing.filter((x) => !before.has(`${x.rule} ${x.subject.id}`)).map((x) => x.rule);
    expect(added.sort()).toEqual(['host.offline']);
    expect(firing.filter((x) => x.rule === 'host.offline')).toHaveLength(1);
    // One notification while the host is away: no guest.down or policy.failed of its guests fired, and none
    // resolved either (what they are is unknown while it is silent).
    expect(receiver.received.slice(sentBefore).map((r) => JSON.parse(r.body)).map((n) => `${n.event} ${n.alert.rule}`)).toEqual(['alert.firing host.offline']);
    expect((await alerts('resolved')).filter((x) => x.rule === 'guest.down' || x.rule === 'policy.failed')).toEqual([]);
    const firingSent = receiver.received.map((r) => JSON.parse(r.body)).filter((n) => n.event === 'alert.firing').map((n) => `${n.alert.rule} ${n.alert.subject.id}`);
    expect(firingSent.length, 'each alert notified once').toBe(new Set(firingSent).size);
    await page.goto('/health');
    await until('the unknown cells', async () => ((await table())['100'] ?? [])[0]?.startsWith('unknown: no heartbeat from its host for'));
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    a!.agent = runAgent(a!);
    await until('host.offline resolved', async () => (await alerts('resolved')).some((x) => x.rule === 'host.offline'));
    expect((await alerts('firing')).filter((x) => x.rule === 'host.offline')).toEqual([]);
    await until('the resolved notification', async () => notified('host.offline', 'alert.resolved').length === 1);
    // The open page follows the host's return by itself.
    await until('the cells known again, live', async () => ((await table())['100'] ?? [])[0] === 'pass: running');
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(errors).toEqual([]);
  });
});
