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
    await expect.poll(() => page.getByRole('button', { name: /Create instance|Rename instance|Remove host|Upgrade agent/ }).count()).toBe(0);
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

  it('an administrator adds a host: the page shows the one-line install command, ready to copy', async () => {
    const page = await dash.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dash.server.baseUrl });
    await signIn(page, dash.server, 'administrator', '/hosts');
    await page.getByRole('button', { name: 'Add a host' }).click();
    await page.getByLabel('Name (optional)').fill('rack-2');
    await page.getByRole('button', { name: 'Create install command' }).click();
    const command = page.getByTestId('install-command').locator('code');
    await expect.poll(() => command.count()).toBe(1);
    const text = (await command.textContent()) ?? '';
    expect(text).toMatch(new RegExp(`^curl -fsSL ${dash.server.baseUrl.replace(/\./g, '\\.')}/install/agent\\.sh \\| sudo bash -s -- --token hfe_[A-Za-z0-9_-]{43}$`));
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(text);

    // The token in the command works once for an agent.
    const token = /--token (hfe_\S+)/.exec(text)![1]!;
    const enrolled = await dash.server.anonymous().post('/api/agent/enroll', { hostname: 'pve-new', machine_id: 'e2e-new', agent_version: '1.0.0' }, bearer(token));
    expect(enrolled.status).toBe(201);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await expect.poll(() => page.locator('tr[data-host="pve-new"]').count()).toBe(1);
    await expect.poll(() => page.locator('tr[data-host="pve-new"] [data-status]').getAttribute('data-status')).toBe('offline');
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
