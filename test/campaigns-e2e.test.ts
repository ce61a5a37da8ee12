// End to end, campaigns (PRODUCT.md "Collections, scripts, campaigns and release channels"): the
// built server in its own process on a fixed loopback port (so that it can be restarted under the
// agents), the real installer it serves and two real bash agents looping (two hosts: two agent roots,
// each with its machine id and hostname), fake qm/pct that write each argument list with the time
// it started and ended, and an operator in Chromium.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { TestClient } from './helpers/http.js';
import { closeContexts, sharedBrowser } from './e2e/helpers.js';
import { until, freePort } from './helpers/until.js';
import { installAgent, spawnAgent } from './helpers/real-agent.js';

const root = path.resolve(import.meta.dirname, '..');
const fakeBin = path.join(root, 'reporter/test/fixtures/agent-bin');
const SETUP_TOKEN = 'campaigns-e2e-setup-token-0123456789';
const PASSWORD = 'campaigns-e2e-password';
const VMIDS = [101, 201, 102, 202, 103, 203];

let server: BuiltServer;
let serverEnv: Record<string, string>;
let admin: TestClient;
let browser: Browser;
let page: Page;
let dir: string;
let log: string;
let stdin: string;
let failFile: string;
const agents: ChildProcess[] = [];
const hostIds: number[] = [];
const errors: string[] = [];

interface Call {
  at: number;
  edge: 'start' | 'end';
  tool: string;
  verb: string;
  vmid: number;
  /** The whole argument list, as the tool was given it. */
  args: string;
}
/** What the fake hypervisors ran since the log was last emptied. */
const calls = (): Call[] =>
  fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [at, tool, edge, verb, vmid, ...rest] = line.split(' ');
      return { at: Number(at), tool: tool!, edge: edge as Call['edge'], verb: verb!, vmid: Number(vmid), args: [verb, vmid, ...rest].filter((a) => a !== undefined).join(' ') };
    });
const startOf = (vmid: number) => calls().find((c) => c.vmid === vmid && c.edge === 'start')!.at;
const endOf = (vmid: number) => calls().find((c) => c.vmid === vmid && c.edge === 'end')!.at;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-campaigns-e2e-'));
  const wrappers = path.join(dir, 'bin');
  const pveDir = path.join(dir, 'pve');
  log = path.join(dir, 'hypervisor.log');
  stdin = path.join(dir, 'stdin');
  failFile = path.join(dir, 'fail');
  for (const d of [wrappers, pveDir, stdin]) fs.mkdirSync(d, { recursive: true });
  for (const f of [log, failFile]) fs.writeFileSync(f, '');
  fs.writeFileSync(path.join(pveDir, 'pvesh-pve-a-qemu.json'), JSON.stringify([101, 102, 103].map((vmid) => ({ vmid, name: `web-${vmid}`, status: 'running' }))));
  fs.writeFileSync(path.join(pveDir, 'pvesh-pve-a-lxc.json'), '[]');
  fs.writeFileSync(path.join(pveDir, 'pvesh-pve-b-qemu.json'), '[]');
  fs.writeFileSync(path.join(pveDir, 'pvesh-pve-b-lxc.json'), JSON.stringify([201, 202, 203].map((vmid) => ({ vmid, name: `ct-${vmid}`, status: 'running', type: 'lxc' }))));
  // qm and pct: each verb logged with its arguments and the millisecond it started and ended (half a
  // second apart), failing for a vmid listed in the fail file; `config` is the fixture's. A script's
  // body arrives on stdin (`pct exec <vmid> -- bash -s`): kept as stdin/<vmid>. apt-get logs the same way, so a script that ran on a host itself would show.
  const fake = `#!/usr/bin/env bash
tool="\${0##*/}"
if [[ "\${1:-}" == config ]]; then exec "$FIXTURE_BIN/$tool" "$@"; fi
printf '%s %s start %s\\n' "$(date +%s%3N)" "$tool" "$*" >>"$CAMPAIGN_LOG"
if [[ "\${1:-}" == exec ]]; then cat >"$CAMPAIGN_STDIN/\${2:-}"; echo "patched \${2:-}"; fi
sleep 0.5
code=0
if grep -qx -- "\${2:-}" "$FAIL_FILE"; then code=1; echo "fake $tool: $1 of \${2:-} failed" >&2; fi
printf '%s %s end %s\\n' "$(date +%s%3N)" "$tool" "$*" >>"$CAMPAIGN_LOG"
exit "$code"
`;
  for (const tool of ['qm', 'pct', 'apt-get']) fs.writeFileSync(path.join(wrappers, tool), fake, { mode: 0o755 });

  const port = await freePort();
  serverEnv = agentServerEnv(dir, SETUP_TOKEN, { PORT: String(port), FLEET_HEARTBEAT_INTERVAL_S: '2' });
  server = await startBuiltServer(serverEnv);
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);

  for (const name of ['pve-a', 'pve-b']) {
    const hostRoot = path.join(dir, name);
    fs.mkdirSync(path.join(hostRoot, 'etc'), { recursive: true });
    fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), `e2e0123456789abcdef0123456789${name}\n`);
    fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), `${name}\n`);
    const env = {
      PATH: `${wrappers}:${fakeBin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
      HOME: dir,
      TMPDIR: dir,
      FIXTURE_BIN: fakeBin,
      CAMPAIGN_LOG: log,
      CAMPAIGN_STDIN: stdin,
      FAIL_FILE: failFile,
      FAKE_SYSTEMCTL_LOG: path.join(dir, `${name}-systemctl.log`),
      FAKE_PVE_DIR: pveDir,
      HOMEFLEET_INTERVAL_MIN_S: '1',
      HOMEFLEET_CURL_MAX_TIME: '5',
    };
    const token = (await admin.post('/api/hosts/enrollment-tokens', { name })).body.token as string;
    await installAgent(server.url, token, hostRoot, env);
    agents.push(spawnAgent(hostRoot, env));
  }
  const hosts = await until('both hosts to report their guests', async () => {
    const list = (await admin.get('/api/hosts')).body as { id: number; hostname: string; status: string; guest_count: number }[];
    return list.length === 2 && list.every((h) => h.status === 'online' && h.guest_count === 3) && list;
  });
  hostIds.push(...hosts.sort((a, b) => a.hostname.localeCompare(b.hostname)).map((h) => h.id));

  const created = await admin.post('/api/users', { username: 'operator-campaigns', display_name: 'Operator', role: 'operator' });
  const own = new TestClient(server.url);
  await own.post('/api/auth/login', { username: 'operator-campaigns', password: created.body.temporary_password });
  await own.post('/api/auth/password', { current_password: created.body.temporary_password, new_password: PASSWORD });
  browser = await sharedBrowser();
  page = await (await browser.newContext({ baseURL: server.url })).newPage();
  page.on('console', (m) => m.type() === 'error' && !/status of 40\d|ERR_CONNECTION_REFUSED|net::ERR/.test(m.text()) && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/login?next=%2Fcampaigns');
  await page.getByLabel('Username').fill('operator-campaigns');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/campaigns');
}, 90_000);

afterAll(async () => {
  for (const agent of agents) {
    try {
      process.kill(-agent.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await closeContexts();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const waitForStatus = (status: string, ms = 40_000) => page.locator(`[data-testid="campaign-state"][data-status="${status}"]`).waitFor({ timeout: ms });

describe('a campaign through two real agents, in Chromium', () => {
  it('a reboot over 6 guests on two hosts, waves of 2 with a 2 s pause, previewed, then run wave by wave', async () => {
    await page.getByRole('button', { name: 'New campaign…' }).click();
    const dialog = page.getByTestId('campaign-dialog');
    await dialog.getByLabel('Name').fill('reboot everything');
    await dialog.getByRole('textbox', { name: 'Targets' }).fill(VMIDS.join(' '));
    await dialog.getByLabel('Action').selectOption('reboot');
    await dialog.getByLabel('Wave size').fill('2');
    await dialog.getByLabel('Pause between waves (s)').fill('2');
    // Nothing starts before the preview: the Start button comes with it.
    expect(await dialog.getByRole('button', { name: 'Start' }).count()).toBe(0);
    await dialog.getByRole('button', { name: 'Preview' }).click();
    await dialog.getByTestId('campaign-preview').waitFor();
    // Each guest with its host, so the spread of a wave over the hosts shows before Start.
    await expect
      .poll(() => dialog.getByTestId('preview-wave').allTextContents())
      .toEqual(['101 “web-101” on pve-a, 201 “ct-201” on pve-b', '102 “web-102” on pve-a, 202 “ct-202” on pve-b', '103 “web-103” on pve-a, 203 “ct-203” on pve-b']);
    expect(calls()).toEqual([]);
    await dialog.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/\/campaigns\/\d+$/);
    await waitForStatus('succeeded');
    expect(await page.getByTestId('campaign-finished').textContent()).toMatch(/^Done after \d+ s\. Nothing failed\.$/);
    expect(await page.locator('[data-testid="wave-2"] tr[data-status="succeeded"]').count()).toBe(2);

    // Each guest rebooted once, by its own tool; each wave started at least 2 s after the last one ended.
    expect(calls().filter((c) => c.edge === 'start').map((c) => `${c.tool} ${c.verb} ${c.vmid}`).sort()).toEqual(
      ['qm reboot 101', 'qm reboot 102', 'qm reboot 103', 'pct reboot 201', 'pct reboot 202', 'pct reboot 203'].sort(),
    );
    for (const [previous, next] of [[[101, 201], [102, 202]], [[102, 202], [103, 203]]] as const) {
      const ended = Math.max(...previous.map(endOf));
      const started = Math.min(...next.map(startOf));
      expect(started - ended, `wave ${next.join(',')} after ${previous.join(',')}`).toBeGreaterThanOrEqual(2000);
    }
    expect(errors).toEqual([]);
  }, 90_000);

  it('a failure in wave 2 with max_failures 0 stops it: the rest skipped and never run, and the page says what failed', async () => {
    fs.writeFileSync(log, '');
    fs.writeFileSync(failFile, '102\n');
    try {
      const res = await admin.post('/api/campaigns', { name: 'stop at the first failure', target: { vmids: VMIDS }, step: { type: 'guest.action', action: 'reboot' }, wave_size: 2, max_failures: 0 });
      expect(res.status, res.text).toBe(201);
      await page.goto(`/campaigns/${res.body.id}`);
      await waitForStatus('failed');
      await page.locator('[data-testid="wave-2"] tr[data-target="202"]:not([data-status="running"])').waitFor();
    } finally {
      fs.writeFileSync(failFile, '');
    }
    expect(await page.getByTestId('campaign-finished').textContent()).toMatch(/^Stopped after \d+ s\. 1 failed: 102 “web-102” \(failed \(exit 1\)\)\. 2 skipped\.$/);
    expect(await page.locator('[data-testid="wave-3"] tr[data-status="skipped"]').count()).toBe(2);
    await new Promise((r) => setTimeout(r, 1500));
    expect(calls().filter((c) => c.edge === 'start').map((c) => c.vmid).sort()).toEqual([101, 102, 201, 202]);
    expect(errors).toEqual([]);
  }, 60_000);

  it('a server restart in the pause after wave 1 resumes the campaign where it was', async () => {
    fs.writeFileSync(log, '');
    const res = await admin.post('/api/campaigns', { name: 'through a restart', target: { vmids: VMIDS }, step: { type: 'guest.action', action: 'reboot' }, wave_size: 2, pause_s: 3 });
    expect(res.status, res.text).toBe(201);
    await page.goto(`/campaigns/${res.body.id}`);
    await until('wave 1 to end and the pause to begin', async () => (await admin.get(`/api/campaigns/${res.body.id}`)).body.next_wave_at !== null);
    expect(calls().filter((c) => c.edge === 'start').map((c) => c.vmid).sort()).toEqual([101, 201]);
    // The page's stream is open before the stop: one it sent while the server was stopping would be
    // answered 503 (server shutting down), which Chromium logs.
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    const stopped = await server.stop();
    expect(stopped.exitCode, stopped.all).toBe(0);
    server = await startBuiltServer(serverEnv);
    // The page's live stream comes back by itself; the agents' polls do too.
    await waitForStatus('succeeded', 60_000);
    expect(calls().filter((c) => c.edge === 'start').map((c) => c.vmid).sort()).toEqual([...VMIDS].sort());
    expect(Math.min(startOf(102), startOf(202)) - Math.max(endOf(101), endOf(201))).toBeGreaterThanOrEqual(3000);
    expect(Math.min(startOf(103), startOf(203)) - Math.max(endOf(102), endOf(202))).toBeGreaterThanOrEqual(3000);
    // The page saw the server go and come back, and nothing it asked for failed: no connection was
    // kept alive through the stop for its live stream to reconnect on and be answered 503.
    expect(errors).toEqual([]);
  }, 90_000);

  it('a script over the containers tagged web (a collection), picked by name in the dialog: pct exec <vmid> -- bash -s with the body on stdin, two at a time', async () => {
    fs.writeFileSync(log, '');
    for (const vmid of [201, 202, 203]) expect((await admin.post('/api/instances', { vmid, name: `ct-${vmid}`, state: 'deployed', stack: 'production' })).status).toBe(201);
    expect((await admin.post('/api/instances', { vmid: 101, name: 'web-101', state: 'deployed', stack: 'production' })).status).toBe(201);
    expect((await admin.post('/api/instances/bulk', { vmids: [201, 202, 203], add_tags: ['web'] })).body).toEqual({ updated: 3 });
    expect((await admin.post('/api/collections', { name: 'web containers', filter: { tags: ['web'] } })).status).toBe(201);
    const body = 'apt-get update && apt-get -y upgrade\n';
    expect((await admin.post('/api/scripts', { name: 'patch', runs_on: 'guest', interpreter: 'bash', body })).status).toBe(201);

    await page.goto('/campaigns');
    await page.getByRole('button', { name: 'New campaign…' }).click();
    const dialog = page.getByTestId('campaign-dialog');
    await dialog.getByLabel('Name').fill('patch web');
    await dialog.getByLabel('Target kind').selectOption('collection_id');
    // Collections and scripts are offered by name.
    await expect.poll(() => dialog.getByLabel('Collection').locator('option').allTextContents()).toEqual(['pick a collection', 'web containers (3 instances)']);
    await dialog.getByLabel('Collection').selectOption({ label: 'web containers (3 instances)' });
    await dialog.getByLabel('Step').selectOption('script');
    await expect.poll(() => dialog.getByLabel('Script').locator('option').allTextContents()).toEqual(['pick a script', 'patch (runs on the guest, bash)']);
    await dialog.getByLabel('Script').selectOption({ label: 'patch (runs on the guest, bash)' });
    await dialog.getByLabel('Wave size').fill('2');
    await dialog.getByRole('button', { name: 'Preview' }).click();
    await dialog.getByTestId('campaign-preview').waitFor();
    await expect.poll(() => dialog.getByTestId('preview-wave').allTextContents()).toEqual(['201 “ct-201” on pve-b, 202 “ct-202” on pve-b', '203 “ct-203” on pve-b']);
    await dialog.getByRole('button', { name: 'Start' }).click();
    await page.waitForURL(/\/campaigns\/\d+$/);
    await waitForStatus('succeeded');
    await expect.poll(() => page.getByTestId('campaign-state').textContent()).toBe('script “patch”');
    // Each row names its host by name.
    expect(await page.locator('[data-testid="wave-1"] tr[data-target="201"] a').textContent()).toBe('pve-b');

    const started = calls().filter((c) => c.edge === 'start');
    expect(started.map((c) => `${c.tool} ${c.args}`).sort()).toEqual(['pct exec 201 -- bash -s', 'pct exec 202 -- bash -s', 'pct exec 203 -- bash -s']);
    for (const vmid of [201, 202, 203]) expect(fs.readFileSync(path.join(stdin, String(vmid)), 'utf8')).toBe(body);
    expect(startOf(203)).toBeGreaterThanOrEqual(Math.max(endOf(201), endOf(202)));
    expect(errors).toEqual([]);
  }, 90_000);

  it('the same script on a host installed without --allow-scripts fails with the spec’s words and runs nothing; the page shows it', async () => {
    fs.writeFileSync(log, '');
    const script = await admin.post('/api/scripts', { name: 'patch the host', runs_on: 'host', interpreter: 'bash', body: 'apt-get update && apt-get -y upgrade\n' });
    expect(script.status).toBe(201);
    expect((await admin.get(`/api/hosts/${hostIds[0]}`)).body.allows_scripts).toBe(false);
    const res = await admin.post('/api/campaigns', { name: 'patch pve-a', target: { host_ids: [hostIds[0]] }, step: { type: 'script', script_id: script.body.id } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.targets).toMatchObject([{ host_id: hostIds[0], hostname: 'pve-a', vmid: null, name: 'pve-a', status: 'running' }]);
    await page.goto(`/campaigns/${res.body.id}`);
    await waitForStatus('failed');
    const row = page.locator('[data-testid="wave-1"] tr[data-target="pve-a"]');
    expect(await row.getAttribute('data-status')).toBe('failed');
    expect(await row.textContent()).toContain('failed (exit 126)');
    await row.getByRole('button', { name: 'output' }).click();
    expect(await row.locator('pre').textContent()).toBe('scripts are not allowed on this host');
    const operation = (await admin.get(`/api/operations/${res.body.targets[0].operation_id}`)).body;
    expect(operation).toMatchObject({ type: 'script', vmid: null, status: 'failed', exit_code: 126, output: 'scripts are not allowed on this host' });
    // Nothing ran: not the script's apt-get, not a hypervisor tool.
    await new Promise((r) => setTimeout(r, 1000));
    expect(fs.readFileSync(log, 'utf8')).toBe('');
    expect(errors).toEqual([]);
  }, 60_000);
});
