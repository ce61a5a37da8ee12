import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDir, bearer, enroll, enrollmentToken, heartbeat, writeAgent } from '../helpers/hosts.js';
import { signIn, startDashboard, type Dashboard } from './helpers.js';

/** A host enrolled and heard from once: its id and host token. */
async function reportingHost(dash: Dashboard, hostname: string, guests: unknown[] = [], agent_version = '1.0.0') {
  const enrolled = await enroll(dash.server.anonymous(), await enrollmentToken(dash.server, { name: hostname }), { hostname, machine_id: `m-${hostname}`, agent_version });
  expect(enrolled.status).toBe(201);
  const { host_id: id, host_token: token } = enrolled.body as { host_id: number; host_token: string };
  expect((await heartbeat(dash.server, token, { hostname, agent_version, guests })).status).toBe(200);
  return { id, token };
}

/** The page's notices of one kind, as text (role status for information and success, alert for errors). */
const alerts = (page: Page) => page.getByRole('alert').allTextContents();

describe('what an administrator and an operator do on a host page', () => {
  let dash: Dashboard;
  const kept = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-kept-agents-'));
  beforeAll(async () => {
    // Three shipped versions: 1.0.0 current, 0.9.0 and 0.8.0 kept for rollbacks.
    writeAgent(path.join(kept, '0.9.0'), '0.9.0');
    writeAgent(path.join(kept, '0.8.0'), '0.8.0');
    dash = await startDashboard({ config: { agentAllowHttp: true }, hosts: { agentDir: agentDir('1.0.0'), keptAgentsDir: kept } });
  });
  afterAll(async () => {
    await dash?.stop();
    fs.rmSync(kept, { recursive: true, force: true });
  });

  it('after revoking a host token the page offers a re-bind token, whose command enrolls that machine onto the same host', async () => {
    const host = await reportingHost(dash, 'pve-leak');
    const page = await dash.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dash.server.baseUrl });
    await signIn(page, dash.server, 'administrator', `/hosts/${host.id}`);

    // Revoking asks first, naming the host.
    await page.getByRole('button', { name: 'Revoke host token…' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm revoking the host token of pve-leak' });
    await expect.poll(() => confirm.textContent()).toContain('Revoke the host token of pve-leak? Its agent stops reporting at once');
    await confirm.getByRole('button', { name: 'Revoke host token' }).click();
    const revoked = page.getByTestId('token-revoked');
    await expect.poll(() => revoked.textContent()).toContain('make a re-bind token and run its command on pve-leak');
    expect(await page.locator('main').textContent()).not.toMatch(/re-run the install command/i);
    expect((await heartbeat(dash.server, host.token, { hostname: 'pve-leak' })).status).toBe(401);
    // What the notice says: an ordinary token does not bring this machine back.
    const ordinary = await enroll(dash.server.anonymous(), await enrollmentToken(dash.server, { name: 'ordinary' }), { hostname: 'pve-leak', machine_id: 'm-pve-leak' });
    expect(ordinary.status).toBe(409);

    // The re-bind token says what it is for before it is made, then shows its command once.
    await page.getByRole('button', { name: 'Make a re-bind token…' }).click();
    const explain = page.getByRole('group', { name: 'Make a re-bind token for pve-leak' });
    await expect.poll(() => explain.textContent()).toMatch(/enrolls this machine \(m-pve-leak\) again as this host, keeping its record, guests and history.*works\s+once, only on this machine/);
    await explain.getByRole('button', { name: 'Make re-bind token' }).click();
    const command = page.getByTestId('rebind-command');
    await expect.poll(() => command.locator('pre code').count()).toBe(1);
    const text = (await command.locator('pre code').textContent()) ?? '';
    expect(text).toMatch(/^curl -fsSL .*\/install\/agent\.sh \| bash -s -- --token hfe_[A-Za-z0-9_-]{43}$/);
    expect(await command.textContent()).toContain('Run this as root on pve-leak to enroll it again');
    await command.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(text);
    await command.getByRole('button', { name: 'Done' }).click();
    // Shown once: gone after Done, and the page says a re-bind token is waiting.
    await expect.poll(() => command.count()).toBe(0);
    await expect.poll(() => page.getByTestId('rebind-waiting').count()).toBe(1);

    // The enrollment token list names the host it re-binds, linked.
    await page.goto('/hosts');
    const token = (await dash.server.client.get('/api/hosts/enrollment-tokens')).body.find((t: { host_id: number | null }) => t.host_id === host.id);
    const enrolls = page.locator(`tr[data-token="${token.id}"]`).getByTestId('token-enrolls');
    await expect.poll(() => enrolls.textContent()).toBe('re-binds pve-leak');
    expect(await enrolls.getByRole('link').getAttribute('href')).toBe(`/hosts/${host.id}`);
    // The refused enrollment did not spend the ordinary token: it is listed, for a new host.
    const ordinaryToken = (await dash.server.client.get('/api/hosts/enrollment-tokens')).body.find((t: { name: string }) => t.name === 'ordinary');
    expect(await page.locator(`tr[data-token="${ordinaryToken.id}"]`).getByTestId('token-enrolls').textContent()).toBe('a new host');

    // The command's token brings the machine back onto the same host, with a new host token that reports.
    const again = await dash.server.anonymous().post('/api/agent/enroll', { hostname: 'pve-leak', machine_id: 'm-pve-leak', agent_version: '1.0.0' }, bearer(/--token (hfe_\S+)/.exec(text)![1]!));
    expect(again.status).toBe(201);
    expect(again.body.host_id).toBe(host.id);
    expect((await heartbeat(dash.server, again.body.host_token, { hostname: 'pve-leak' })).status).toBe(200);
    expect(await alerts(page)).toEqual([]);
    expect(dash.errors).toEqual([]);
  });

  it('a conflict names and links the other host with nothing to apply; apply all leaves production renames, said as information; a production rename asks first', async () => {
    await dash.server.client.post('/api/instances', { vmid: 7402, name: 'prod-old', state: 'deployed', stack: 'production' });
    const other = await reportingHost(dash, 'pve-twin', [{ vmid: 7401, name: 'shared', type: 'qemu', status: 'running' }]);
    const host = await reportingHost(dash, 'pve-main', [
      { vmid: 7401, name: 'shared', type: 'qemu', status: 'running' },
      { vmid: 7402, name: 'prod-new', type: 'qemu', status: 'running' },
      { vmid: 7403, name: 'fresh-1', type: 'lxc', status: 'running' },
      { vmid: 7404, name: 'fresh-2', type: 'lxc', status: 'running' },
    ]);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', `/hosts/${host.id}`);

    const conflict = page.locator('li[data-drift="conflict"][data-vmid="7401"]');
    await expect.poll(() => conflict.textContent()).toContain('Conflict: guest “shared” is also reported by pve-twin');
    expect(await conflict.getByRole('link', { name: 'pve-twin' }).getAttribute('href')).toBe(`/hosts/${other.id}`);
    expect(await conflict.getByRole('button').count()).toBe(0);
    const production = page.locator('li[data-drift="name_differs"][data-vmid="7402"]');
    expect(await production.textContent()).toContain('production');
    expect(await production.getByRole('button', { name: 'Rename instance', exact: true }).count()).toBe(0);

    await page.getByRole('button', { name: 'Apply all…' }).click();
    const all = page.getByRole('group', { name: 'Confirm applying all drift from pve-main' });
    await expect.poll(() => all.textContent()).toContain('Apply all 2 changes from pve-main to the registry? 2 instances created, as the host reports them. Left out: 1 production rename and 1 conflict.');
    await all.getByRole('button', { name: 'Apply 2 changes' }).click();
    await expect.poll(() => page.getByText('Applied 2 changes to the registry.').isVisible()).toBe(true);
    const skipped = page.getByTestId('drift-skipped');
    expect(await skipped.locator('li[data-vmid="7402"]').textContent()).toBe('VMID 7402 “prod-old” → “prod-new” (production): A production instance is renamed only by applying its own item.');
    expect(await skipped.locator('li[data-vmid="7401"]').textContent()).toMatch(/^VMID 7401 “shared” \(conflict\): Also reported by pve-twin/);
    // Information, not a failure.
    expect(await alerts(page)).toEqual([]);
    expect((await dash.server.client.get('/api/instances/7402')).body.name).toBe('prod-old');
    expect((await dash.server.client.get('/api/instances/7403')).status).toBe(200);

    // The production rename: its own button, a confirmation naming the instance; Cancel changes nothing.
    await production.getByRole('button', { name: 'Rename production instance…' }).click();
    const rename = production.getByRole('group', { name: 'Confirm renaming production instance prod-old' });
    expect(await rename.textContent()).toContain('Rename the production instance “prod-old” (VMID 7402) to “prod-new”, as pve-main reports it?');
    await rename.getByRole('button', { name: 'Cancel' }).click();
    expect((await dash.server.client.get('/api/instances/7402')).body.name).toBe('prod-old');
    await production.getByRole('button', { name: 'Rename production instance…' }).click();
    await rename.getByRole('button', { name: 'Rename “prod-old”' }).click();
    await expect.poll(() => page.getByText('Applied to the registry.').isVisible()).toBe(true);
    expect((await dash.server.client.get('/api/instances/7402')).body.name).toBe('prod-new');

    // The other host shows the same conflict, linking back; its page starts without this one's notices.
    await conflict.getByRole('link', { name: 'pve-twin' }).click();
    await page.waitForURL(`**/hosts/${other.id}`);
    const back = page.locator('li[data-drift="conflict"][data-vmid="7401"]');
    await expect.poll(() => back.getByRole('link', { name: 'pve-main' }).getAttribute('href')).toBe(`/hosts/${host.id}`);
    expect(await page.getByText('Applied to the registry.').count()).toBe(0);
    expect(dash.errors).toEqual([]);
  });

  it('a deleted host page says it was removed and when, and offers nothing', async () => {
    const host = await reportingHost(dash, 'pve-gone');
    expect((await dash.server.client.delete(`/api/hosts/${host.id}?force=true`)).status).toBe(200);
    const deletedAt = (await dash.server.client.get(`/api/hosts/${host.id}`)).body.deleted_at as string;
    expect(deletedAt).toMatch(/Z$/);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', `/hosts/${host.id}`);
    const notice = page.getByTestId('host-deleted');
    await expect.poll(() => notice.textContent()).toMatch(/^pve-gone was removed just now · .* UTC\. It no longer reports/);
    expect(await notice.locator('time').getAttribute('datetime')).toBe(deletedAt);
    expect(await page.locator('main').getByRole('button').allTextContents()).toEqual(['Back to hosts']);
    expect(await page.locator('main input').count()).toBe(0);
    // Not compared with the registry any more, so not said to match it.
    expect(await page.locator('main').textContent()).toContain('A removed host is no longer compared with the registry.');
    expect(await page.locator('main').textContent()).not.toContain('The registry matches this host');
    expect(dash.errors).toEqual([]);
  });

  it('an administrator rolls an agent back to an older shipped version after a confirmation naming host and version', async () => {
    const host = await reportingHost(dash, 'pve-back');
    const oldest = await reportingHost(dash, 'pve-oldest', [], '0.8.0');
    const viewer = await dash.newPage();
    await signIn(viewer, dash.server, 'operator', `/hosts/${host.id}`);
    await viewer.locator('li[data-drift], .props').first().waitFor();
    expect(await viewer.getByRole('button', { name: /Roll back/ }).count()).toBe(0);

    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', `/hosts/${oldest.id}`);
    // Nothing ships older than 0.8.0: only the upgrade is offered.
    await expect.poll(() => page.getByRole('button', { name: 'Upgrade agent' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: /Roll back/ }).count()).toBe(0);

    await page.goto(`/hosts/${host.id}`);
    await page.getByRole('button', { name: 'Roll back agent…' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm rolling back the agent on pve-back' });
    const version = confirm.getByLabel('Version to roll back to');
    expect(await version.locator('option').allTextContents()).toEqual(['0.9.0', '0.8.0']);
    expect(await confirm.textContent()).toContain('Roll back the agent on pve-back from 1.0.0 to');
    await version.selectOption('0.8.0');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await dash.server.client.get(`/api/hosts/${host.id}`)).body.upgrade).toBeNull();

    await page.getByRole('button', { name: 'Roll back agent…' }).click();
    await version.selectOption('0.8.0');
    await confirm.getByRole('button', { name: 'Roll back pve-back to 0.8.0' }).click();
    await expect.poll(() => page.getByText('Rollback to 0.8.0 requested; it is offered at the next heartbeat.').isVisible()).toBe(true);
    expect((await dash.server.client.get(`/api/hosts/${host.id}`)).body.upgrade).toMatchObject({ state: 'pending', version: '0.8.0', from: '1.0.0' });
    // The agent is told it is a rollback, which it needs to accept an older version.
    const beat = await heartbeat(dash.server, host.token, { hostname: 'pve-back' });
    expect(beat.body.commands).toEqual([{ type: 'upgrade', version: '0.8.0', rollback: true }]);
    expect(dash.errors).toEqual([]);
  });
});
