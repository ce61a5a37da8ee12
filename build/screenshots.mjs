#!/usr/bin/env node
// `npm run screenshots`: the dashboard pages in light and dark themes, on a desktop and on a 390×844
// phone, taken from a real headless server with sample data, into screenshots/ (ignored by git). A page
// wider than the phone is named at the end (and the run fails), since phones must not scroll sideways.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { chromium } from 'playwright-core';
import { insertUsageFixture } from '../test/fixtures/usage-reports.mjs';
import { chromiumLaunchOptions } from './chromium.mjs';
import { root, sampleInstances, startHeadless } from './headless-server.mjs';

const out = path.join(root, 'screenshots');
fs.mkdirSync(out, { recursive: true });
// An older agent kept for rollbacks (build/agents/<version>/, where the server looks), made for this run
// only when there is none, and removed again at the end.
const keptAgents = path.join(root, 'build', 'agents');
const keptAgent = path.join(keptAgents, '0.9.0');
const madeKeptAgents = !fs.existsSync(keptAgents);
const madeKeptAgent = !fs.existsSync(keptAgent);
if (madeKeptAgent) {
  fs.mkdirSync(keptAgent, { recursive: true });
  fs.writeFileSync(path.join(keptAgent, 'host-agent.sh'), '#!/usr/bin/env bash\nHOMEFLEET_AGENT_VERSION="0.9.0"\n');
}
// Agents on plain HTTP, so the sample hosts can enroll against this loopback server.
const server = await startHeadless({ env: { FLEET_AGENT_ALLOW_HTTP: 'true' } });
const PHONE = { width: 390, height: 844 };
const overflowing = [];
const browser = await chromium.launch(await chromiumLaunchOptions());
try {
  await server.seedInstances(sampleInstances(48));
  // One instance with a change history for the timeline.
  await server.request('PUT', '/api/instances/101', { state: 'testing' });
  await server.request('PUT', '/api/instances/101', { state: 'deployed', tailscale_ip: '100.64.9.9' });
  // A production instance whose services changed: flags read "Argus: off → on"; its delete is disabled with the reason.
  await server.request('PUT', '/api/instances/100', { argus: 1, hardware_acceleration: 1 });
  await server.request('PUT', '/api/instances/100', { state: 'testing', argus: 0 });
  // An instance with every service: its Services cell ends in an ellipsis.
  await server.request('PUT', '/api/instances/107', { atlas: 1, argus: 1, semaphore: 1, patchmon: 1, tailscale: 1, andromeda: 1, hardware_acceleration: 1 });
  if (server.accessLayer) {
    await server.request('POST', '/api/users', { username: 'olivia', display_name: 'Olivia Operator', role: 'operator' });
    await server.request('POST', '/api/users', { username: 'victor', display_name: 'Victor Viewer', role: 'viewer' });
    await server.request('POST', '/api/tokens', { name: 'nightly backup', role: 'administrator', expires_at: new Date(Date.now() + 90 * 864e5).toISOString() });
    // One failed sign-in for the audit log (a fresh client, so the administrator's session stays).
    await fetch(`${server.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ username: 'victor', password: 'not his password' }),
    });
  }
  // Three hosts: one with an older agent (an upgrade is offered), up 22 minutes, whose guests differ
  // from the registry (drift to apply, a production rename, and a VMID the second host reports too: a
  // conflict); one on the shipped agent (a rollback to the kept 0.9.0 is offered), a day up, with a
  // re-bind token waiting; one removed.
  const hostIds = [];
  if (server.accessLayer) {
    for (const [hostname, agent_version, uptime_s, guests] of [
      ['pve-rack-1', '0.9.0', 22 * 60, [
        { vmid: 100, name: 'web-renamed', type: 'qemu', status: 'running' },
        { vmid: 101, name: 'db-01', type: 'lxc', status: 'running' },
        { vmid: 900, name: 'scratch', type: 'qemu', status: 'stopped' },
        { vmid: 901, name: 'nas', type: 'lxc', status: 'running' },
        { vmid: 902, name: 'moved-vm', type: 'qemu', status: 'running' },
      ]],
      ['pve-rack-2', '1.0.0', 26 * 3600 + 5 * 60, [
        { vmid: 102, name: 'cache-01', type: 'qemu', status: 'running' },
        { vmid: 902, name: 'moved-vm', type: 'qemu', status: 'stopped' },
      ]],
      ['pve-retired', '1.0.0', 3600, []],
    ]) {
      const token = (await server.request('POST', '/api/hosts/enrollment-tokens', { name: hostname })).body.token;
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
      const enrolled = await (await fetch(`${server.url}/api/agent/enroll`, { method: 'POST', headers, body: JSON.stringify({ hostname, machine_id: `screenshots-${hostname}`, agent_version }) })).json();
      hostIds.push(enrolled.host_id);
      const beat = { agent_version, started_at: new Date(Date.now() - uptime_s * 1000).toISOString().replace(/\.\d+Z$/, 'Z'), hostname, addresses: ['192.0.2.10'], uptime_s, hypervisor_version: 'pve-manager/8.2.4', guests };
      await fetch(`${server.url}/api/agent/heartbeat`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${enrolled.host_token}` }, body: JSON.stringify(beat) });
    }
    await server.request('POST', '/api/hosts/enrollment-tokens', { host_id: hostIds[1], name: 're-bind pve-rack-2' });
    await server.request('DELETE', `/api/hosts/${hostIds[2]}?force=true`);
  }
  const jobs = (await server.request('GET', '/api/jobs')).body;
  const jobId = (key) => (Array.isArray(jobs) ? jobs.find((job) => job.key === key)?.id : undefined);

  // Usage reports for the usage page: a deterministic 90-day fixture written straight into the server's
  // database (ingestion is throttled per address, rightly, so thousands cannot go through the API quickly).
  const db = new Database(server.dbPath);
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'usage_reports'").get()) insertUsageFixture(db, Date.now(), 4_000, 90);
  db.close();

  // Jobs: PatchMon configured against a stand-in on 127.0.0.1 whose answer is not a host list, so its
  // runs fail with a clear message; while `holding`, the stand-in answers only when told, so a run can
  // be shown running. Tailscale and Semaphore stay unconfigured (the enable warning, the saved notice).
  const held = [];
  let holding = false;
  const standIn = http.createServer((_req, res) => {
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"devices":[]}');
    if (holding) held.push(answer);
    else answer();
  });
  await new Promise((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  const runningJob = jobId('patchmon_sync');
  if (runningJob) {
    await server.request('PUT', `/api/jobs/${runningJob}`, { config: { api_url: `http://127.0.0.1:${standIn.address().port}/api/v1/api/hosts`, api_token: 'key:secret' } });
  }
  // Tailscale against the same stand-in (a tailnet with no devices): its first run would clear every
  // Tailscale address, which the preview before a first run shows.
  if (jobId('tailscale_sync')) {
    await server.request('PUT', `/api/jobs/${jobId('tailscale_sync')}`, { config: { api_key: 'tskey-screenshots', api_url: `http://127.0.0.1:${standIn.address().port}` } });
  }

  const pages = [
    ['instances', '/instances'],
    ['instances-filtered', '/instances?search=web&sort=vmid&order=desc'],
    ['instance-detail', '/instances/101'],
    ['instance-detail-production', '/instances/100'],
    ['instance-edit-error', '/instances/new'],
    ['jobs', '/jobs'],
    ...(runningJob ? [['job-running', `/jobs/${runningJob}`]] : []),
    ...(hostIds.length
      ? [['hosts', '/hosts'], ['host-detail', `/hosts/${hostIds[0]}`], ['host-detail-current', `/hosts/${hostIds[1]}`], ['host-detail-deleted', `/hosts/${hostIds[2]}`]]
      : []),
    ['usage', '/usage'],
    ['settings', '/settings'],
    ['users', '/users'],
    ['audit', '/audit'],
    ['telemetry', '/telemetry'],
    ['password', '/password'],
    ['tokens', '/tokens'],
  ];
  const taken = [];
  for (const colorScheme of ['light', 'dark']) {
    const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    if (server.accessLayer) {
      await page.goto(`${server.url}/login`);
      await page.waitForSelector('form');
      await shoot(page, `login-${colorScheme}`);
      await server.signInPage(page);
    }
    for (const [name, url] of pages) {
      await page.goto(server.url + url);
      await page.waitForSelector('main h1');
      await settle(page);
      if (name === 'usage') await page.waitForSelector('[data-testid="daily-chart"] canvas');
      if (name === 'job-running') {
        // Run now from this browser (the API client's session ended when the page signed in as the same
        // account); the run waits on the stand-in remote and the open page shows it arrive live.
        holding = true;
        // The page moves on before this answer arrives: the evaluation then ends with its page, which is fine.
        page.evaluate((id) => fetch(`/api/jobs/${id}/run`, { method: 'POST' }).catch(() => {}), runningJob).catch(() => {});
        await page.waitForSelector('[data-testid="elapsed"]:has-text("3 s")');
      }
      if (name === 'instance-edit-error') {
        await page.getByLabel('VMID').fill('100');
        await page.getByLabel('Name').fill('duplicate');
        await page.getByLabel('Tailscale IP').fill('10.0.0.300');
        await page.getByRole('button', { name: 'Create instance' }).click();
        await page.waitForSelector('.field-error');
      }
      await shoot(page, `${name}-${colorScheme}`);
      if (name === 'job-running') {
        holding = false;
        held.splice(0).forEach((answer) => answer());
      }
    }
    if (server.accessLayer) await interactions(page, colorScheme);
    // Every page on a phone: nothing may be wider than the screen (tables scroll inside their own box).
    const phone = await browser.newContext({ colorScheme, viewport: PHONE, storageState: await context.storageState() });
    const small = await phone.newPage();
    // The job page with its runs (the running one is shown on the desktop only).
    const phonePages = pages.map(([name, url]) => (name === 'job-running' ? ['job-detail-runs', url] : [name, url]));
    for (const [name, url] of phonePages) {
      await small.goto(server.url + url);
      await small.waitForSelector('main h1');
      await settle(small);
      if (name === 'usage') await small.waitForSelector('[data-testid="daily-chart"] canvas');
      await checkWidth(small, `${name}-phone-${colorScheme}`);
      await shoot(small, `${name}-phone-${colorScheme}`);
    }
    if (server.accessLayer) {
      // The header's one row opens into the menu.
      await small.goto(`${server.url}/instances`);
      await small.waitForSelector('main h1');
      await small.getByRole('button', { name: 'Menu' }).click();
      await shoot(small, `menu-open-phone-${colorScheme}`);
      await phoneInteractions(small, colorScheme);
    }
    await phone.close();
    // The live indicator while the event stream cannot connect.
    await page.route('**/api/events*', (route) => route.fulfill({ status: 503, body: '' }));
    await page.goto(`${server.url}/instances`);
    await page.waitForSelector('[data-testid="live"]:has-text("reconnecting")');
    await shoot(page, `live-reconnecting-${colorScheme}`);
    await context.close();
  }

  /** The states the rough edges of issues 10 and 25 were about; each step can be repeated, so both themes show the same. */
  async function interactions(page, colorScheme) {
    const settled = async () => {
      await page.waitForSelector('main h1');
      await settle(page);
    };
    if (jobId('tailscale_sync')) {
      // A job that never ran offers a preview of its first run; the preview lists what would change.
      await page.goto(`${server.url}/jobs/${jobId('tailscale_sync')}`);
      await settled();
      await page.getByRole('button', { name: 'Preview the first run' }).click();
      await page.getByTestId('run-preview').waitFor();
      await shoot(page, `job-first-run-preview-${colorScheme}`);
    }
    if (hostIds.length) {
      // Add a host: the command in the root form, and what keeps it from working on another machine.
      await page.goto(`${server.url}/hosts`);
      await settled();
      await page.getByRole('button', { name: 'Add a host' }).click();
      await page.getByRole('button', { name: 'Create install command' }).click();
      await page.getByTestId('install-command').waitFor();
      await shoot(page, `hosts-add-${colorScheme}`);
      // Apply all asks first, saying what it will do.
      await page.goto(`${server.url}/hosts/${hostIds[0]}`);
      await settled();
      await page.getByRole('button', { name: 'Apply all…' }).click();
      await page.getByRole('group', { name: /Confirm applying all drift/ }).waitFor();
      await shoot(page, `host-apply-all-confirm-${colorScheme}`);
      // What apply all left (the production rename, the conflict) is information; the two instances it
      // made are deleted again afterwards, so the next theme shows the same.
      await page.getByRole('button', { name: /^Apply \d+ changes$/ }).click();
      await page.getByTestId('drift-skipped').waitFor();
      await shoot(page, `host-apply-all-result-${colorScheme}`);
      for (const vmid of [900, 901]) await page.evaluate((v) => fetch(`/api/instances/${v}`, { method: 'DELETE' }), vmid);
      // A production rename asks first, naming the instance.
      await page.reload();
      await settled();
      await page.getByRole('button', { name: 'Rename production instance…' }).click();
      await page.getByRole('group', { name: /Confirm renaming production instance/ }).waitFor();
      await shoot(page, `host-production-rename-confirm-${colorScheme}`);
      // The host token: revoking asks first; the notice after it leads to a re-bind token, explained, then shown once.
      await page.goto(`${server.url}/hosts/${hostIds[1]}`);
      await settled();
      await page.getByRole('button', { name: 'Revoke host token…' }).click();
      await shoot(page, `host-revoke-confirm-${colorScheme}`);
      await page.getByRole('group', { name: /Confirm revoking the host token/ }).getByRole('button', { name: 'Revoke host token' }).click();
      await page.getByTestId('token-revoked').waitFor();
      await page.getByRole('button', { name: 'Make a re-bind token…' }).click();
      await shoot(page, `host-rebind-explain-${colorScheme}`);
      await page.getByRole('button', { name: 'Make re-bind token' }).click();
      await page.getByTestId('rebind-command').waitFor();
      await shoot(page, `host-rebind-command-${colorScheme}`);
      // Rolling back asks first, naming the host and the version.
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('button', { name: 'Roll back agent…' }).click();
      await page.getByRole('group', { name: /Confirm rolling back the agent/ }).waitFor();
      await shoot(page, `host-rollback-confirm-${colorScheme}`);
    }
    // Disabling a user asks first, naming them.
    await page.goto(`${server.url}/users`);
    await settled();
    // The account's links open from its name, below the header's one row.
    await page.locator('button[aria-controls="account-links"]').click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await shoot(page, `account-menu-open-${colorScheme}`);
    await page.keyboard.press('Escape');
    await page.locator('tr[data-user="olivia"]').getByRole('button', { name: 'Disable…' }).click();
    await page.getByRole('group', { name: 'Confirm: Disable olivia' }).waitFor();
    await shoot(page, `users-disable-confirm-${colorScheme}`);
    // A new token is shown once, with a Copy button.
    await page.goto(`${server.url}/tokens`);
    await settled();
    await page.getByLabel('Name').fill(`deploy script (${colorScheme})`);
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByTestId('new-token').waitFor();
    await shoot(page, `tokens-created-${colorScheme}`);
    // An import says a snapshot is taken first, and the list shows it afterwards.
    await page.goto(`${server.url}/settings`);
    await settled();
    const exported = await page.evaluate(() => fetch('/api/export').then((res) => res.text()));
    const file = path.join(os.tmpdir(), `homefleet-backup-${process.pid}.json`);
    fs.writeFileSync(file, exported);
    await page.getByLabel('Backup file').setInputFiles(file);
    await page.getByTestId('import-preview').waitFor();
    await shoot(page, `settings-import-preview-${colorScheme}`);
    const before = await page.locator('[data-testid="snapshot-list"] tbody tr').count();
    await page.getByRole('button', { name: 'Replace registry with this backup' }).click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="snapshot-list"] tbody tr').length > n, before);
    fs.rmSync(file);
    await shoot(page, `settings-after-import-${colorScheme}`);
    if (jobId('tailscale_sync')) {
      // Enabling a job that is not configured warns instead of "saved".
      await page.goto(`${server.url}/jobs`);
      await settled();
      const box = page.locator('article[data-job="semaphore_sync"]').getByRole('checkbox', { name: 'Enabled' });
      if (await box.isChecked()) {
        await box.uncheck();
        await page.locator('article[data-job="semaphore_sync"] .notice').waitFor();
      }
      await box.check();
      await page.locator('article[data-job="semaphore_sync"] .notice-warning').waitFor();
      await shoot(page, `jobs-enable-warning-${colorScheme}`);

      // Saving settings confirms, and the confirmation stays.
      await page.goto(`${server.url}/jobs/${jobId('semaphore_sync')}`);
      await settled();
      await page.getByLabel(/Inventory endpoint URL/).fill('http://127.0.0.1:9/api/project/1/inventory/1');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.locator('#settings .notice').filter({ hasText: 'Settings saved' }).waitFor();
      // The page's reload after saving: only the token is still missing.
      await page.getByTestId('not-configured').filter({ hasText: 'set api_token.' }).waitFor();
      await shoot(page, `job-detail-saved-${colorScheme}`);

      // A failed run: the message beside a button of its own size.
      await page.goto(`${server.url}/jobs/${jobId('patchmon_sync')}`);
      await settled();
      await page.getByRole('button', { name: 'Run now' }).click();
      await page.getByRole('alert').waitFor();
      await page.locator('table.runs tbody tr').first().waitFor();
      await shoot(page, `job-detail-failed-run-${colorScheme}`);
    }

    // A role change asks first; demoting the last administrator is refused with the reason.
    await page.goto(`${server.url}/users`);
    await settled();
    await page.getByLabel('Role of olivia').selectOption('administrator');
    await page.getByRole('button', { name: 'Change role' }).waitFor();
    await shoot(page, `users-role-confirm-${colorScheme}`);
    await page.locator('tr[data-user="olivia"]').getByRole('button', { name: 'Cancel' }).click();
    await page.getByLabel('Role of admin').selectOption('viewer');
    await page.getByRole('button', { name: 'Change role' }).click();
    await page.getByRole('alert').waitFor();
    await shoot(page, `users-last-admin-refused-${colorScheme}`);

    // The audit log filtered to failed sign-ins, one raw entry open.
    await page.goto(`${server.url}/audit`);
    await settled();
    await page.locator('table.log tbody tr').first().locator('summary').click();
    await shoot(page, `audit-raw-open-${colorScheme}`);
    await page.getByLabel('What').selectOption('login.failure');
    await shoot(page, `audit-filtered-${colorScheme}`);
  }

  /** The confirmations and dialogs of issue 25 on the phone. */
  async function phoneInteractions(page, colorScheme) {
    await page.goto(`${server.url}/users`);
    await page.waitForSelector('main h1');
    await settle(page);
    await page.locator('tr[data-user="victor"]').getByRole('button', { name: 'Reset password…' }).click();
    await checkWidth(page, `users-reset-confirm-phone-${colorScheme}`);
    await shoot(page, `users-reset-confirm-phone-${colorScheme}`);
    if (hostIds.length) {
      await page.goto(`${server.url}/hosts`);
      await page.waitForSelector('main h1');
      await page.getByRole('button', { name: 'Add a host' }).click();
      await page.getByRole('button', { name: 'Create install command' }).click();
      await page.getByTestId('install-command').waitFor();
      await checkWidth(page, `hosts-add-phone-${colorScheme}`);
      await shoot(page, `hosts-add-phone-${colorScheme}`);
      await page.goto(`${server.url}/hosts/${hostIds[1]}`);
      await page.waitForSelector('main h1');
      await page.getByRole('button', { name: 'Make a re-bind token…' }).click();
      await page.getByRole('button', { name: 'Make re-bind token' }).click();
      await page.getByTestId('rebind-command').waitFor();
      await checkWidth(page, `host-rebind-command-phone-${colorScheme}`);
      await shoot(page, `host-rebind-command-phone-${colorScheme}`);
      await page.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('button', { name: 'Roll back agent…' }).click();
      await page.getByRole('group', { name: /Confirm rolling back the agent/ }).waitFor();
      await checkWidth(page, `host-rollback-confirm-phone-${colorScheme}`);
      await shoot(page, `host-rollback-confirm-phone-${colorScheme}`);
    }
    if (jobId('tailscale_sync')) {
      await page.goto(`${server.url}/jobs/${jobId('tailscale_sync')}`);
      await page.waitForSelector('main h1');
      await page.getByRole('button', { name: 'Preview the first run' }).click();
      await page.getByTestId('run-preview').waitFor();
      await checkWidth(page, `job-first-run-preview-phone-${colorScheme}`);
      await shoot(page, `job-first-run-preview-phone-${colorScheme}`);
    }
  }

  /** Notes a page wider than the phone; the run fails at the end if any is. */
  async function checkWidth(page, name) {
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    if (width > PHONE.width) overflowing.push(`${name}: ${width} px`);
  }

  /** The page's data is in and the event stream is live (an open stream means the network never goes idle). */
  async function settle(page) {
    if (server.accessLayer) await page.waitForSelector('[data-testid="live"]:has-text("live")', { timeout: 10_000 }).catch(() => {});
    await page.waitForTimeout(400);
  }

  async function shoot(page, name) {
    const file = path.join(out, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    taken.push(path.relative(root, file));
  }

  // The setup page, on a second server with no account yet: an error keeps the token; success leads to a sign-in that says so.
  const fresh = await startHeadless({ setUp: false });
  try {
    if (fresh.accessLayer) {
      for (const colorScheme of ['light', 'dark']) {
        const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        await page.goto(`${fresh.url}/setup?token=${encodeURIComponent(fresh.setupToken)}`);
        await shoot(page, `setup-${colorScheme}`);
        await page.getByLabel('Username').fill('first admin');
        await page.getByLabel('Display name').fill('First Administrator');
        await page.getByLabel('Password', { exact: true }).fill('a long enough password');
        await page.getByLabel('Repeat the password').fill('a long enough passw0rd');
        await page.getByRole('button', { name: 'Create administrator' }).click();
        await page.waitForSelector('.error');
        await shoot(page, `setup-error-${colorScheme}`);
        const small = await (await browser.newContext({ colorScheme, viewport: PHONE })).newPage();
        await small.goto(`${fresh.url}/setup?token=${encodeURIComponent(fresh.setupToken)}`);
        await checkWidth(small, `setup-phone-${colorScheme}`);
        await shoot(small, `setup-phone-${colorScheme}`);
        await small.context().close();
        if (colorScheme === 'dark') {
          await page.getByLabel('Username').fill('first');
          await page.getByLabel('Password', { exact: true }).fill('a long enough password');
          await page.getByLabel('Repeat the password').fill('a long enough password');
          await page.getByRole('button', { name: 'Create administrator' }).click();
          await page.waitForURL('**/login?setup=done');
          await page.waitForSelector('.notice-success');
          await shoot(page, `login-after-setup-${colorScheme}`);
        }
        await context.close();
      }
    }
  } finally {
    await fresh.stop();
  }
  console.log(`${taken.length} screenshots:\n${taken.join('\n')}`);
  if (overflowing.length) {
    console.error(`wider than a ${PHONE.width} px phone:\n${overflowing.join('\n')}`);
    process.exitCode = 1;
  }
  held.splice(0).forEach((answer) => answer());
  standIn.close();
} finally {
  await browser.close();
  await server.stop();
  if (madeKeptAgent) fs.rmSync(keptAgent, { recursive: true, force: true });
  if (madeKeptAgents) fs.rmSync(keptAgents, { recursive: true, force: true });
}
