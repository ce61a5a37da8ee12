import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDir, bearer, enroll, heartbeat } from '../helpers/hosts.js';
import { pageFetch, signIn, startDashboard, type Dashboard } from './helpers.js';

describe('the Hosts pages', () => {
  let dash: Dashboard;
  let hostId: number;
  beforeAll(async () => {
    dash = await startDashboard({ config: { agentAllowHttp: true }, hosts: { agentDir: agentDir('1.0.0') } });
    const token = (await dash.server.client.post('/api/hosts/enrollment-tokens', { name: 'seed' })).body.token as string;
    const enrolled = await enroll(dash.server.anonymous(), token, { hostname: 'pve-e2e', machine_id: 'e2e-machine' });
    expect(enrolled.status).toBe(201);
    hostId = enrolled.body.host_id;
    await dash.server.client.post('/api/instances', { vmid: 7102, name: 'old-name', state: 'deployed', stack: 'development' });
    const hb = await heartbeat(dash.server, enrolled.body.host_token, {
      hostname: 'pve-e2e',
      guests: [
        { vmid: 7101, name: 'web', type: 'qemu', status: 'running' },
        { vmid: 7102, name: 'new-name', type: 'lxc', status: 'running' },
      ],
    });
    expect(hb.status).toBe(200);
  });
  afterAll(() => dash?.stop());

  it('a viewer sees status, heartbeat, agent, guests and drift, with nothing to change', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/hosts');
    const row = page.locator('tr[data-host="pve-e2e"]');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('[data-status]').getAttribute('data-status')).toBe('online');
    expect(await row.locator('time').textContent()).toBe('just now');
    expect(await row.locator('td.mono').textContent()).toBe('1.0.0');
    expect(await row.getByTestId('guest-count').textContent()).toBe('2');
    expect(await row.getByTestId('drift-count').textContent()).toBe('2');
    await expect.poll(() => page.getByRole('button', { name: 'Add a host' }).count()).toBe(0);

    await row.getByRole('link', { name: 'pve-e2e' }).click();
    await expect.poll(() => page.locator('tr[data-guest]').count()).toBe(2);
    // A guest links to its registry instance; one with no instance has nothing to link to.
    await expect.poll(() => page.locator('tr[data-guest="7102"] a').getAttribute('href')).toBe('/instances/7102');
    await expect.poll(() => page.locator('tr[data-guest="7101"] a').count()).toBe(0);
    await expect.poll(() => page.locator('li[data-drift]').count()).toBe(2);
    await expect.poll(() => page.getByRole('button', { name: /Create instance|Rename|Remove host|Upgrade agent|Roll back|Revoke|re-bind/ }).count()).toBe(0);
    expect(await pageFetch(page, 'DELETE', `/api/hosts/${hostId}`)).toEqual({ status: 403, body: { error: 'forbidden' } });
    expect((await pageFetch(page, 'POST', '/api/hosts/enrollment-tokens', {})).status).toBe(403);
  });

  it('an operator applies drift with one click and the instance history says agent:<hostname>', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', `/hosts/${hostId}`);
    const item = page.locator('li[data-drift="name_differs"]');
    await expect.poll(() => item.count()).toBe(1);
    await expect.poll(() => page.getByRole('button', { name: 'Add a host' }).count()).toBe(0);
    await expect.poll(() => page.getByRole('button', { name: 'Remove host…' }).count()).toBe(0);
    await item.getByRole('button', { name: 'Rename instance' }).click();
    await expect.poll(() => page.getByText('Applied to the registry.').isVisible()).toBe(true);
    await expect.poll(() => page.locator('li[data-drift]').count()).toBe(1);
    const history = (await dash.server.client.get('/api/instances/7102/history')).body;
    expect(history[0]).toMatchObject({ field: 'name', old_value: 'old-name', new_value: 'new-name', changed_by: 'agent:pve-e2e' });
    expect((await pageFetch(page, 'POST', '/api/hosts/enrollment-tokens', {})).status).toBe(403);
  });

  it('an administrator adds a host: the root install command ready to copy, what stands in its way, the token listed at once', async () => {
    const page = await dash.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dash.server.baseUrl });
    await signIn(page, dash.server, 'administrator', '/hosts');
    // The seed token is used up: kept for the record, listed only on request.
    await expect.poll(() => page.getByLabel(/Show used-up, expired and revoked tokens/).count()).toBe(1);
    await expect.poll(() => page.locator('tr[data-token]').count()).toBe(0);
    await page.getByRole('button', { name: 'Add a host' }).click();
    await page.getByLabel('Name (optional)').fill('rack-2');
    await page.getByRole('button', { name: 'Create install command' }).click();
    const command = page.getByTestId('install-command').locator('pre code');
    await expect.poll(() => command.count()).toBe(1);
    const text = (await command.textContent()) ?? '';
    // The root form: a Proxmox node has no sudo.
    expect(text).toMatch(new RegExp(`^curl -fsSL ${dash.server.baseUrl.replace(/\./g, '\\.')}/install/agent\\.sh \\| bash -s -- --token hfe_[A-Za-z0-9_-]{43}$`));
    // This server is on 127.0.0.1: the dialog says the command cannot reach it from the hypervisor.
    await expect.poll(() => page.getByTestId('install-notes').textContent()).toContain('which on the hypervisor is the hypervisor itself');
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(text);
    // The new token is in the list without a reload.
    const listed = await dash.server.client.get('/api/hosts/enrollment-tokens');
    const made = (listed.body as { id: number; name: string }[]).find((t) => t.name === 'rack-2')!;
    await expect.poll(() => page.locator(`tr[data-token="${made.id}"]`).textContent()).toContain('active');

    // The token in the command works once for an agent.
    const token = /--token (hfe_\S+)/.exec(text)![1]!;
    const enrolled = await dash.server.anonymous().post('/api/agent/enroll', { hostname: 'pve-new', machine_id: 'e2e-new', agent_version: '1.0.0' }, bearer(token));
    expect(enrolled.status).toBe(201);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await expect.poll(() => page.locator('tr[data-host="pve-new"]').count()).toBe(1);
    await expect.poll(() => page.locator('tr[data-host="pve-new"] [data-status]').getAttribute('data-status')).toBe('offline');
    // Used up by that enrollment: hidden until asked for.
    await expect.poll(() => page.locator(`tr[data-token="${made.id}"]`).count()).toBe(0);
    await page.getByLabel(/Show used-up, expired and revoked tokens/).check();
    await expect.poll(() => page.locator(`tr[data-token="${made.id}"]`).textContent()).toContain('used up');
    expect(dash.errors).toEqual([]);
  });

  it('the dialog says what a plain-HTTP server without FLEET_AGENT_ALLOW_HTTP lacks', async () => {
    const plain = await startDashboard({ hosts: { agentDir: agentDir('1.0.0') } });
    try {
      const page = await plain.newPage({ viewport: { width: 390, height: 844 } });
      await signIn(page, plain.server, 'administrator', '/hosts');
      await page.getByRole('button', { name: 'Add a host' }).click();
      await page.getByRole('button', { name: 'Create install command' }).click();
      const notes = page.getByTestId('install-notes').locator('li');
      await expect.poll(() => notes.count()).toBe(2);
      expect(await notes.first().textContent()).toMatch(/plain HTTP.*403 "https required".*FLEET_PUBLIC_URL.*FLEET_AGENT_ALLOW_HTTP=true/);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      expect(plain.errors).toEqual([]);
    } finally {
      await plain.stop();
    }
  });

  it('an operator applies all drift only after a confirmation naming the host and what it does; uptime and upgrades read right', async () => {
    const token = (await dash.server.client.post('/api/hosts/enrollment-tokens', { name: 'old agent' })).body.token as string;
    const enrolled = await enroll(dash.server.anonymous(), token, { hostname: 'pve-old', machine_id: 'e2e-old', agent_version: '0.9.0' });
    await dash.server.client.post('/api/instances', { vmid: 7302, name: 'was-called', state: 'deployed', stack: 'development' });
    const guests = [
      { vmid: 7301, name: 'fresh', type: 'qemu', status: 'running' },
      { vmid: 7302, name: 'now-called', type: 'lxc', status: 'running' },
    ];
    const beat = await heartbeat(dash.server, enrolled.body.host_token, { hostname: 'pve-old', agent_version: '0.9.0', uptime_s: 22 * 60 + 10, guests });
    expect(beat.status).toBe(200);
    const page = await dash.newPage();
    await signIn(page, dash.server, 'operator', `/hosts/${enrolled.body.host_id}`);
    await expect.poll(() => page.getByTestId('uptime').textContent()).toBe('22 min');
    await page.getByRole('button', { name: 'Apply all…' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm applying all drift from pve-old' });
    await expect.poll(() => confirm.textContent()).toContain('Apply all 2 changes from pve-old to the registry? 1 instance created, 1 instance renamed');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect((await dash.server.client.get('/api/instances/7301')).status).toBe(404);
    await page.getByRole('button', { name: 'Apply all…' }).click();
    await confirm.getByRole('button', { name: 'Apply 2 changes' }).click();
    await expect.poll(() => page.getByText('Applied 2 changes to the registry.').isVisible()).toBe(true);
    expect((await dash.server.client.get('/api/instances/7301')).status).toBe(200);
    expect((await dash.server.client.get('/api/instances/7302')).body.name).toBe('now-called');

    // An administrator is offered the upgrade only where a newer agent ships (1.0.0 here).
    const admin = await dash.newPage();
    await signIn(admin, dash.server, 'administrator', `/hosts/${enrolled.body.host_id}`);
    await expect.poll(() => admin.getByRole('button', { name: 'Upgrade agent' }).count()).toBe(1);
    await admin.goto(`/hosts/${hostId}`);
    await expect.poll(() => admin.getByRole('button', { name: 'Revoke host token' }).count()).toBe(1);
    expect(await admin.getByRole('button', { name: 'Upgrade agent' }).count()).toBe(0);
    // One version ships (1.0.0, which it runs): nothing to roll back to.
    expect(await admin.getByRole('button', { name: /Roll back/ }).count()).toBe(0);
    expect(await admin.locator('.props').textContent()).toContain('the newest this server ships');
    expect(dash.errors).toEqual([]);
  });

  it('the list and the detail page follow heartbeats live, without a reload', async () => {
    const token = (await dash.server.client.post('/api/hosts/enrollment-tokens', { name: 'live' })).body.token as string;
    const enrolled = await enroll(dash.server.anonymous(), token, { hostname: 'pve-live', machine_id: 'e2e-live', agent_version: '1.0.0' });
    expect(enrolled.status).toBe(201);
    const { host_id: liveId, host_token: hostToken } = enrolled.body as { host_id: number; host_token: string };
    const page = await dash.newPage();
    await signIn(page, dash.server, 'viewer', '/hosts');
    const row = page.locator('tr[data-host="pve-live"]');
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('[data-status]').getAttribute('data-status')).toBe('offline');
    expect(await row.getByTestId('guest-count').textContent()).toBe('0');
    await expect.poll(() => page.getByTestId('live').textContent()).toBe('live');
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    // The first heartbeat: online, just now, its guests and their drift (no instances for them).
    const guests = [
      { vmid: 7201, name: 'a', type: 'qemu', status: 'running' },
      { vmid: 7202, name: 'b', type: 'lxc', status: 'running' },
      { vmid: 7203, name: 'c', type: 'lxc', status: 'stopped' },
    ];
    expect((await heartbeat(dash.server, hostToken, { hostname: 'pve-live', agent_version: '1.0.0', guests })).status).toBe(200);
    await expect.poll(() => row.locator('[data-status]').getAttribute('data-status')).toBe('online');
    await expect.poll(() => row.getByTestId('guest-count').textContent()).toBe('3');
    await expect.poll(() => row.getByTestId('drift-count').textContent()).toBe('3');
    expect(await row.locator('time').textContent()).toBe('just now');

    // The detail page (reached in the app, not reloaded) follows the next heartbeat too.
    await row.getByRole('link', { name: 'pve-live' }).click();
    await expect.poll(() => page.locator('tr[data-guest]').count()).toBe(3);
    expect((await heartbeat(dash.server, hostToken, { hostname: 'pve-live', agent_version: '1.0.0', guests: guests.slice(0, 1) })).status).toBe(200);
    await expect.poll(() => page.locator('tr[data-guest]').count()).toBe(1);
    await expect.poll(() => page.locator('li[data-drift]').count()).toBe(1);
    await expect.poll(() => page.locator('.page-head [data-status]').getAttribute('data-status')).toBe('online');
    expect(new URL(page.url()).pathname).toBe(`/hosts/${liveId}`);
    await expect.poll(() => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(dash.errors).toEqual([]);
  });

  it('a removal the host confirms while the page is open reads as done, not as started', async () => {
    const token = (await dash.server.client.post('/api/hosts/enrollment-tokens', { name: 'going' })).body.token as string;
    const enrolled = await enroll(dash.server.anonymous(), token, { hostname: 'pve-going', machine_id: 'e2e-going', agent_version: '1.0.0' });
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', `/hosts/${enrolled.body.host_id}`);
    await page.getByRole('button', { name: 'Remove host…' }).click();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(() => page.getByTestId('deletion-state').textContent()).toContain('Waiting for the host’s next heartbeat');
    // The agent takes the uninstall at its heartbeat and sends its receipt: the page follows live.
    const beat = await heartbeat(dash.server, enrolled.body.host_token, { hostname: 'pve-going' });
    const uninstall = beat.body.commands.find((c: { type: string }) => c.type === 'uninstall');
    expect((await dash.server.anonymous().post(`/api/agent/receipts/${uninstall.operation_id}`, undefined, bearer(uninstall.receipt_token))).status).toBe(204);
    await expect.poll(() => page.getByTestId('deletion-state').textContent()).toContain('Removed; the host confirmed');
    expect(await page.locator('main').textContent()).not.toContain('Removal started');
    expect(dash.errors).toEqual([]);
  });

  it('an administrator removes a host and sees the receipt state', async () => {
    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', `/hosts/${hostId}`);
    await page.getByRole('button', { name: 'Remove host…' }).click();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await expect.poll(() => page.getByTestId('deletion-state').textContent()).toContain('Waiting for the host’s next heartbeat');
    await page.getByRole('button', { name: 'Force removal' }).click();
    await expect.poll(() => page.getByTestId('deletion-state').textContent()).toContain('Removed by force');
    await expect.poll(() => page.locator('[data-status]').first().getAttribute('data-status')).toBe('deleted');
    expect(dash.errors).toEqual([]);
  });
});
