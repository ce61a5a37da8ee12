// End to end, deploy and rebuild (PRODUCT.md "Deploy, rebuild and server keys"): the built server in
// its own process, the real installer it serves and the real bash agent looping, with the deploy
// fakes of reporter/test/fixtures/deploy-bin/ (qm, pct, pvesh, pvesm recording each argument list and
// the files they were given) ahead of agent-bin/ on PATH, and people in Chromium on the host page.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { TestClient } from './helpers/http.js';
import { ed25519Line } from './helpers/ssh-keys.js';
import { closeContexts, sharedBrowser } from './e2e/helpers.js';
import { until as waitUntil } from './helpers/until.js';
import { installAgent, spawnAgent } from './helpers/real-agent.js';

const root = path.resolve(import.meta.dirname, '..');
const fixtures = path.join(root, 'reporter/test/fixtures');
const SETUP_TOKEN = 'deploy-e2e-setup-token-0123456789';
const PASSWORD = 'deploy-e2e-password';
const VOLUME = 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst';
const CLOUD_CONFIG = '#cloud-config\npackage_update: true\npackages:\n  - qemu-guest-agent\n';
const GIB = 2 ** 30;

let server: BuiltServer;
let admin: TestClient;
let browser: Browser;
let agent: ChildProcess | undefined;
let dir: string;
let pveDir: string;
let deployDir: string;
let deployLog: string;
let failFile: string;
let hostId: number;
const keys: { id: number; name: string; line: string; fingerprint: string }[] = [];
let configId: number;
const errors: string[] = [];

const until = <T>(what: string, read: () => Promise<T | undefined | false>, ms = 15_000) => waitUntil(what, read, ms);

/** What the fake Proxmox lists: a running VM, a cloud-init VM template with its sizes, a container and a container template. */
function listGuests(extraQemu: object[] = []) {
  const qemu = [
    { vmid: 100, name: 'web', status: 'running' },
    { vmid: 9000, name: 'debian-12-cloud', status: 'stopped', template: 1, maxmem: 2 * GIB, maxdisk: 10 * GIB },
    ...extraQemu,
  ];
  const lxc = [
    { vmid: 200, name: 'db', status: 'running', type: 'lxc' },
    { vmid: 9100, name: 'alpine-3', status: 'stopped', template: 1, type: 'lxc' },
  ];
  fs.writeFileSync(path.join(pveDir, 'pvesh-pve-deploy-qemu.json'), JSON.stringify(qemu));
  fs.writeFileSync(path.join(pveDir, 'pvesh-pve-deploy-lxc.json'), JSON.stringify(lxc));
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-deploy-e2e-'));
  const hostRoot = path.join(dir, 'root');
  const wrappers = path.join(dir, 'bin');
  pveDir = path.join(dir, 'pve');
  deployDir = path.join(dir, 'deploy');
  deployLog = path.join(dir, 'deploy.log');
  failFile = path.join(dir, 'fail-step');
  for (const d of [path.join(hostRoot, 'etc'), pveDir, path.join(deployDir, 'storage/local/snippets'), wrappers]) fs.mkdirSync(d, { recursive: true });
  for (const f of [deployLog, failFile, path.join(dir, 'pve.log')]) fs.writeFileSync(f, '');
  fs.writeFileSync(path.join(hostRoot, 'etc/machine-id'), 'e2e0123456789abcdef0123456789deploy\n');
  fs.writeFileSync(path.join(hostRoot, 'etc/hostname'), 'pve-deploy\n');
  listGuests();
  // The deploy fake fails the step FAKE_DEPLOY_FAIL names; the agent runs for every case, so the
  // switch is a file the test writes ("qm set") and empties.
  fs.writeFileSync(
    path.join(wrappers, 'qm'),
    '#!/usr/bin/env bash\nif [[ -s "$FAKE_FAIL_FILE" ]]; then FAKE_DEPLOY_FAIL="$(cat "$FAKE_FAIL_FILE")"; export FAKE_DEPLOY_FAIL; fi\nexec "$DEPLOY_BIN/qm" "$@"\n',
    { mode: 0o755 },
  );

  server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN, { FLEET_HEARTBEAT_INTERVAL_S: '2' }));
  admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
  for (const [name, comment] of [['alice laptop', 'alice@laptop'], ['ci runner', 'ci@runner']] as const) {
    const line = ed25519Line(comment);
    const saved = await admin.post('/api/server-keys', { name, public_key: line });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    keys.push({ id: saved.body.id, name, line, fingerprint: saved.body.fingerprint });
  }
  const config = await admin.post('/api/cloud-configs', { name: 'base', description: 'qemu-guest-agent', body: CLOUD_CONFIG });
  expect(config.status, JSON.stringify(config.body)).toBe(201);
  configId = config.body.id;

  const env = {
    PATH: `${wrappers}:${fixtures}/deploy-bin:${fixtures}/agent-bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`,
    HOME: dir,
    TMPDIR: dir,
    DEPLOY_BIN: path.join(fixtures, 'deploy-bin'),
    FAKE_FAIL_FILE: failFile,
    FAKE_DEPLOY_LOG: deployLog,
    FAKE_DEPLOY_DIR: deployDir,
    FAKE_SYSTEMCTL_LOG: path.join(dir, 'systemctl.log'),
    FAKE_PVE_DIR: pveDir,
    FAKE_PVE_LOG: path.join(dir, 'pve.log'),
    HOMEFLEET_INTERVAL_MIN_S: '1',
    HOMEFLEET_CURL_MAX_TIME: '5',
  };
  const token = (await admin.post('/api/hosts/enrollment-tokens', { name: 'e2e' })).body.token as string;
  await installAgent(server.url, token, hostRoot, env);
  agent = spawnAgent(hostRoot, env);
  hostId = await until('the host to report its guests', async () => {
    const [host] = (await admin.get('/api/hosts')).body;
    return host?.status === 'online' && host.guest_count === 4 && (host.id as number);
  });
  // The template's sizes, which the dialog pre-fills, come with the heartbeat's metrics.
  await until('the template’s sizes', async () => (await admin.get(`/api/hosts/${hostId}/metrics/latest`)).body?.guests?.some((g: { vmid: number; maxmem: number }) => g.vmid === 9000 && g.maxmem));
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

const signedIn = new Map<string, Page>();
/** A browser signed in as a new account of `role` (one each: signing in again would end the first session). */
async function pageAs(role: 'operator' | 'administrator' | 'viewer'): Promise<Page> {
  const known = signedIn.get(role);
  if (known) {
    await known.goto(`/hosts/${hostId}`);
    return known;
  }
  const username = `${role}-deploy`;
  const created = await admin.post('/api/users', { username, display_name: role, role });
  const own = new TestClient(server.url);
  await own.post('/api/auth/login', { username, password: created.body.temporary_password });
  await own.post('/api/auth/password', { current_password: created.body.temporary_password, new_password: PASSWORD });
  const page = await (await browser.newContext({ baseURL: server.url })).newPage();
  page.on('console', (m) => m.type() === 'error' && !/status of 40\d/.test(m.text()) && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/login?next=${encodeURIComponent(`/hosts/${hostId}`)}`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`**/hosts/${hostId}`);
  signedIn.set(role, page);
  return page;
}

/** The calls the fakes recorded since the log was last emptied, each as its arguments joined by spaces. */
const calls = () =>
  fs
    .readFileSync(deployLog, 'utf8')
    .split('\n\n')
    .filter((c) => c.trim())
    .map((c) => c.replace(/^\n+/, '').split('\n').join(' '));
/** The folder the agent wrote the last key file in (gone by now), as the fake qm noted it. */
const keysFile = () => `${fs.readFileSync(path.join(deployDir, 'keys-dir'), 'utf8').trim()}/authorized_keys`;

/** A fresh start for a case: an empty call log, and the config the fake pvesh answers for the guest about to be cloned. */
function expectDeployOf(vmid: number) {
  fs.writeFileSync(deployLog, '');
  fs.copyFileSync(path.join(fixtures, 'deploy/pvesh-qemu-config-clone.json'), path.join(deployDir, `qemu-${vmid}-config.json`));
}

async function openDeploy(page: Page) {
  await page.getByRole('button', { name: 'Deploy…' }).click();
  const dialog = page.getByTestId('deploy-dialog');
  // The suggestion arrives with the registry's list.
  await expect.poll(() => dialog.getByLabel('New VMID').inputValue()).not.toBe('');
  return dialog;
}

async function chooseFromMenu(page: Page, vmid: number, item: string) {
  await page.locator(`#guest-menu-${vmid}-button`).click();
  await page.locator(`#guest-menu-${vmid}`).getByRole('menuitem', { name: item }).click();
}

const rebuilt = async (vmid: number) => ((await admin.get(`/api/instances/${vmid}/history`)).body as { field: string }[]).filter((e) => e.field === 'rebuilt').length;

describe('deploy and rebuild through the real agent, in Chromium', () => {
  it('an operator deploys from a qemu template with two saved keys and a cloud config: the exact argument lists, the key file, the snippet, a testing instance', async () => {
    const page = await pageAs('operator');
    await page.getByTestId('templates').locator('tr[data-template="9000"]').waitFor();
    const dialog = await openDeploy(page);
    // Pre-filled: the template, the VMID above every one known (the host's 9100 is the highest), the template's sizes.
    expect(await dialog.getByLabel('Source').inputValue()).toBe('9000');
    expect(await dialog.getByLabel('New VMID').inputValue()).toBe('9101');
    expect(await dialog.getByLabel('Memory (MiB)').inputValue()).toBe('2048');
    expect(await dialog.getByLabel('Disk (GiB)').inputValue()).toBe('10');
    // Keys by name and fingerprint.
    for (const k of keys) expect(await dialog.getByTestId('deploy-keys').textContent()).toContain(`${k.name} ${k.fingerprint}`);

    // A wrong field is said beside its box, and nothing is asked of the server.
    await dialog.getByLabel('Name', { exact: true }).fill('App_1');
    await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
    await dialog.locator('#deploy-name-error').waitFor();
    expect(await admin.get(`/api/instances/9101`)).toMatchObject({ status: 404 });

    await dialog.getByLabel('Name', { exact: true }).fill('app1');
    await dialog.getByLabel('Storage', { exact: true }).fill('local-lvm');
    await dialog.getByLabel('Cores').fill('2');
    await dialog.getByLabel('Disk (GiB)').fill('40');
    await dialog.getByLabel('set the network').check();
    await dialog.getByLabel('Bridge').fill('vmbr1');
    await dialog.getByLabel('VLAN').fill('42');
    await dialog.getByLabel('static', { exact: true }).check();
    await dialog.getByLabel('Static address (a.b.c.d/nn)').fill('192.0.2.30/24');
    await dialog.getByLabel('Gateway').fill('192.0.2.1');
    await dialog.getByLabel('Cloud-init user').fill('ops');
    for (const k of keys) await dialog.getByLabel(k.name).check();
    await dialog.getByLabel('Cloud config').selectOption({ label: 'base' });
    expectDeployOf(9101);
    await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
    await dialog.locator('[data-testid="deploy-status"][data-status="succeeded"]').waitFor({ timeout: 10_000 });
    expect(await dialog.getByTestId('deploy-done').textContent()).toBe('Guest 9101 is deployed: instance 9101. Address: 192.0.2.30.');

    const file = keysFile();
    expect(calls()).toEqual([
      'qm clone 9000 9101 --name app1 --full 1 --storage local-lvm',
      'pvesh get /nodes/pve-deploy/qemu/9101/config --output-format json',
      'pvesm path local:snippets/homefleet-9101.yaml',
      `qm set 9101 --cores 2 --memory 2048 --ciuser ops --sshkeys ${file} --ipconfig0 ip=192.0.2.30/24,gw=192.0.2.1 --net0 virtio=BC:24:11:5E:7A:21,bridge=vmbr1,firewall=1,tag=42 --cicustom user=local:snippets/homefleet-9101.yaml`,
      'qm resize 9101 scsi0 40G',
      'qm start 9101',
    ]);
    // The key file held exactly the two saved keys (the fake kept a copy: the agent removed its own).
    expect(fs.readFileSync(path.join(deployDir, 'keys'), 'utf8').trimEnd().split('\n').sort()).toEqual(keys.map((k) => k.line).sort());
    expect(fs.readFileSync(path.join(deployDir, 'keys-mode'), 'utf8').trim()).toBe('600');
    // The cloud config was in the snippets folder when qm set named it, and stays there.
    expect(fs.readFileSync(path.join(deployDir, 'cicustom'), 'utf8')).toBe(CLOUD_CONFIG);
    expect(fs.readFileSync(path.join(deployDir, 'storage/local/snippets/homefleet-9101.yaml'), 'utf8')).toBe(CLOUD_CONFIG);

    const instance = (await admin.get('/api/instances/9101')).body;
    expect(instance).toMatchObject({ vmid: 9101, name: 'app1', state: 'testing', stack: 'development' });
    expect(instance.deploy).toMatchObject({ host_id: hostId, source_type: 'qemu', source_vmid: 9000, cloud_config_id: configId, deployed_by: 'operator-deploy' });
    expect([...instance.deploy.server_key_ids].sort()).toEqual(keys.map((k) => k.id).sort());

    // The link goes to the instance, whose page says how it was deployed, keys by name.
    await dialog.getByRole('link', { name: 'instance 9101' }).click();
    await page.waitForURL('**/instances/9101');
    const from = page.getByTestId('deployed-from');
    await expect.poll(() => from.getByTestId('deploy-keys').textContent()).toContain(`${keys[0]!.name} (${keys[0]!.fingerprint})`);
    expect(await from.getByTestId('deploy-source').textContent()).toBe(`VM 9000, full clone on host ${hostId}`);
    expect(await from.getByTestId('deploy-network').textContent()).toBe('vmbr1, VLAN 42, 192.0.2.30/24 via 192.0.2.1');
    expect(errors).toEqual([]);
  }, 60_000);

  it('an operator makes a container from a template volume: pct create with its options and the chosen key, then pct start', async () => {
    const page = await pageAs('operator');
    const dialog = await openDeploy(page);
    expect(await dialog.getByLabel('New VMID').inputValue()).toBe('9102');
    await dialog.getByLabel('Source').selectOption('volume');
    await dialog.getByLabel('Container template volume').fill(VOLUME);
    await dialog.getByLabel('Name', { exact: true }).fill('ct1');
    await dialog.getByLabel('Root disk storage').fill('local-lvm');
    await dialog.getByLabel('Cores').fill('1');
    await dialog.getByLabel('Memory (MiB)').fill('512');
    await dialog.getByLabel('Disk (GiB)').fill('8');
    await dialog.getByLabel('set the network').check();
    await dialog.getByLabel('VLAN').fill('10');
    await dialog.getByLabel('static', { exact: true }).check();
    await dialog.getByLabel('Static address (a.b.c.d/nn)').fill('192.0.2.50/24');
    await dialog.getByLabel('Gateway').fill('192.0.2.1');
    await dialog.getByLabel(keys[0]!.name).check();
    // A container from a volume takes no cloud-init user or cloud config: the dialog does not offer them.
    expect(await dialog.getByLabel('Cloud config').count()).toBe(0);
    // A VMID the host lists: the server's refusal is shown as it comes, and nothing runs.
    fs.writeFileSync(deployLog, '');
    await dialog.getByLabel('New VMID').fill('100');
    await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
    await dialog.getByText('VMID already exists.').waitFor();
    await dialog.getByLabel('New VMID').fill('9102');
    await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
    await dialog.locator('[data-testid="deploy-status"][data-status="succeeded"]').waitFor({ timeout: 10_000 });
    expect(calls()).toEqual([
      `pct create 9102 ${VOLUME} --hostname ct1 --cores 1 --memory 512 --rootfs local-lvm:8 --net0 name=eth0,bridge=vmbr0,ip=192.0.2.50/24,gw=192.0.2.1,tag=10 --ssh-public-keys ${keysFile()} --unprivileged 1`,
      'pct start 9102',
    ]);
    expect(fs.readFileSync(path.join(deployDir, 'keys'), 'utf8')).toBe(`${keys[0]!.line}\n`);
    expect((await admin.get('/api/instances/9102')).body).toMatchObject({ name: 'ct1', state: 'testing', stack: 'development', deploy: { source_type: 'volume', source_volume: VOLUME } });
    expect(errors).toEqual([]);
  }, 60_000);

  it('a deploy whose qm set fails: the agent destroys the half-made guest, the instance is gone, the dialog names the failed step and shows the output', async () => {
    const page = await pageAs('operator');
    const dialog = await openDeploy(page);
    expect(await dialog.getByLabel('New VMID').inputValue()).toBe('9103');
    await dialog.getByLabel('Name', { exact: true }).fill('broken');
    await dialog.getByLabel('Cores').fill('2');
    await dialog.getByLabel('Disk (GiB)').fill('');
    expectDeployOf(9103);
    fs.writeFileSync(failFile, 'qm set');
    try {
      await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
      await dialog.locator('[data-testid="deploy-status"][data-status="failed"]').waitFor({ timeout: 10_000 });
    } finally {
      fs.writeFileSync(failFile, '');
    }
    expect(calls()).toEqual(['qm clone 9000 9103 --name broken --full 1', 'qm set 9103 --cores 2 --memory 2048', 'qm destroy 9103 --purge']);
    expect(await dialog.getByTestId('deploy-failed').textContent()).toBe(
      'The deploy failed at: qm set 9103 --cores 2 --memory 2048 (exit 25); the half-made guest 9103 was removed. Its registry instance 9103 was removed.',
    );
    expect(await dialog.getByTestId('deploy-output').textContent()).toContain('net0: invalid format - fake qm set failure');
    await until('the instance to be removed', async () => (await admin.get('/api/instances/9103')).status === 404);
    expect(errors).toEqual([]);
  }, 60_000);

  it('a rebuild keeps the VMID, the instance and its history, with one rebuilt entry', async () => {
    // Proxmox now lists the deployed guest, running.
    listGuests([{ vmid: 9101, name: 'app1', status: 'running' }]);
    await until('the host to report 9101', async () => (await admin.get(`/api/hosts/${hostId}`)).body.guests.some((g: { vmid: number }) => g.vmid === 9101));
    const before = (await admin.get('/api/instances/9101')).body;
    const historyBefore = (await admin.get('/api/instances/9101/history')).body as { id: number }[];
    const page = await pageAs('operator');
    await chooseFromMenu(page, 9101, 'Rebuild…');
    const dialog = page.getByRole('dialog', { name: 'Rebuild 9101 “app1”' });
    await expect.poll(() => dialog.getByTestId('rebuild-source').textContent()).toBe('From its deploy spec: VM 9000, as app1.');
    expect(await dialog.getByLabel(/force/).count()).toBe(0);
    const confirm = dialog.getByRole('button', { name: 'Rebuild 9101 “app1”' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel("Type the guest's name").fill('app1');
    expectDeployOf(9101);
    await confirm.click();
    await page.locator('[data-testid="guest-op-9101"]', { hasText: 'rebuild' }).locator('[data-status="succeeded"]').waitFor({ timeout: 10_000 });
    const done = calls();
    expect(done.slice(0, 4)).toEqual([
      'pvesh get /nodes/pve-deploy/qemu/9101/status/current --output-format json',
      'qm stop 9101',
      'qm destroy 9101 --purge',
      'qm clone 9000 9101 --name app1 --full 1 --storage local-lvm',
    ]);
    expect(done.at(-1)).toBe('qm start 9101');
    expect(fs.readFileSync(path.join(deployDir, 'keys'), 'utf8').trimEnd().split('\n').sort()).toEqual(keys.map((k) => k.line).sort());
    const after = (await admin.get('/api/instances/9101')).body;
    expect(after).toMatchObject({ vmid: 9101, name: 'app1', created_at: before.created_at, state: before.state, stack: before.stack });
    expect(await rebuilt(9101)).toBe(1);
    // Its history is kept: every entry it had, and the rebuilt one on top.
    const historyAfter = (await admin.get('/api/instances/9101/history')).body as { id: number; field: string }[];
    expect(historyAfter.map((e) => e.id)).toEqual(expect.arrayContaining(historyBefore.map((e) => e.id)));
    expect(historyAfter.filter((e) => !historyBefore.some((b) => b.id === e.id)).map((e) => e.field)).toEqual(['rebuilt']);
    expect(errors).toEqual([]);
  }, 60_000);

  it('a production rebuild is refused for an operator, with the server’s words, and done with an administrator’s force; a viewer has no Deploy', async () => {
    expect((await admin.put('/api/instances/9101', { stack: 'production' })).status).toBe(200);
    const operator = await pageAs('operator');
    await operator.locator('tr[data-guest="9101"] .badge-production').waitFor();
    await chooseFromMenu(operator, 9101, 'Rebuild…');
    let dialog = operator.getByRole('dialog', { name: 'Rebuild 9101 “app1”' });
    await dialog.getByLabel("Type the guest's name").fill('app1');
    await dialog.getByRole('button', { name: 'Rebuild 9101 “app1”' }).click();
    await dialog.getByText("Rebuilding a production instance needs an administrator's force.").waitFor();

    const administrator = await pageAs('administrator');
    await administrator.locator('tr[data-guest="9101"] .badge-production').waitFor();
    await chooseFromMenu(administrator, 9101, 'Rebuild…');
    dialog = administrator.getByRole('dialog', { name: 'Rebuild 9101 “app1”' });
    await dialog.getByLabel("Type the guest's name").fill('app1');
    await dialog.getByLabel('force (a production instance, or outside the maintenance window)').check();
    fs.writeFileSync(deployLog, '');
    await dialog.getByRole('button', { name: 'Rebuild 9101 “app1”' }).click();
    await administrator.getByText('Rebuild of 9101 “app1” requested.').waitFor();
    // The row showed the first rebuild's success already: this one is the second.
    await until('the forced rebuild to succeed', async () => {
      const ops = ((await admin.get(`/api/operations?host_id=${hostId}&vmid=9101`)).body as { action: string; status: string }[]).filter((o) => o.action === 'rebuild');
      return ops.length === 2 && ops[0]!.status === 'succeeded';
    });
    expect(calls()).toContain('qm destroy 9101 --purge');
    expect(await rebuilt(9101)).toBe(2);
    expect((await admin.get('/api/instances/9101')).body).toMatchObject({ stack: 'production' });

    const viewer = await pageAs('viewer');
    await viewer.getByTestId('templates').waitFor();
    expect(await viewer.getByRole('button', { name: 'Deploy…' }).count()).toBe(0);
    expect(errors).toEqual([]);
  }, 60_000);
});
