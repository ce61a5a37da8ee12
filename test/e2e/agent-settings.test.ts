// The host page's agent settings in Chromium (PRODUCT.md "Release channels", "Plugins"): an
// administrator picks the channel, pins a shipped version (the choices follow the channel) and turns
// collectors off, which the next heartbeat answer carries; an operator sees them read-only.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDir, enroll, enrollmentToken, heartbeat, writeAgent } from '../helpers/hosts.js';
import { signIn, startDashboard, type Dashboard } from './helpers.js';

describe('agent settings on the host page', () => {
  let dash: Dashboard;
  const kept = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-kept-agents-'));
  beforeAll(async () => {
    // Shipped: 1.1.0 current, 1.0.0 and the pre-release 1.2.0-beta.1 kept.
    writeAgent(path.join(kept, '1.0.0'), '1.0.0');
    writeAgent(path.join(kept, '1.2.0-beta.1'), '1.2.0-beta.1');
    dash = await startDashboard({ config: { agentAllowHttp: true }, hosts: { agentDir: agentDir('1.1.0'), keptAgentsDir: kept } });
  });
  afterAll(async () => {
    await dash?.stop();
    fs.rmSync(kept, { recursive: true, force: true });
  });

  it('an administrator sets channel, pin and collectors; an operator reads them', async () => {
    const enrolled = await enroll(dash.server.anonymous(), await enrollmentToken(dash.server, { name: 'pve-settings' }), { hostname: 'pve-settings', machine_id: 'm-settings' });
    const { host_id: id, host_token: token } = enrolled.body as { host_id: number; host_token: string };
    expect((await heartbeat(dash.server, token, { hostname: 'pve-settings' })).status).toBe(200);

    const page = await dash.newPage();
    await signIn(page, dash.server, 'administrator', `/hosts/${id}`);
    const card = page.getByTestId('agent-settings');
    await expect.poll(() => card.getByTestId('agent-channel').textContent()).toBe('stable (releases only)');
    expect(await page.locator('.props').textContent()).toContain('1.1.0 is available');
    await card.getByRole('button', { name: 'Edit agent settings…' }).click();
    const pin = card.getByLabel('Pin the agent to');
    // On stable only the stable versions can be pinned; on beta the pre-release too.
    expect(await pin.locator('option').allTextContents()).toEqual(['no version: offer upgrades on the channel', '1.1.0', '1.0.0']);
    await card.getByLabel('Release channel').selectOption('beta');
    expect(await pin.locator('option').allTextContents()).toEqual(['no version: offer upgrades on the channel', '1.2.0-beta.1', '1.1.0', '1.0.0']);
    await pin.selectOption('1.2.0-beta.1');
    await card.getByRole('checkbox', { name: /^configs/ }).uncheck();
    await card.getByRole('checkbox', { name: /^storage/ }).uncheck();
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.getByTestId('agent-pin').textContent()).toBe('1.2.0-beta.1');
    expect(await card.getByTestId('agent-channel').textContent()).toBe('beta (pre-releases and releases)');
    expect(await card.getByTestId('agent-collectors').textContent()).toBe('metrics on, configs off, storage off, backups on');
    expect(await page.locator('.props').textContent()).toContain('pinned to 1.2.0-beta.1');
    // Never offered an upgrade, but the administrator may move it up to its pin.
    await page.getByRole('button', { name: 'Upgrade agent to 1.2.0-beta.1' }).click();
    await expect.poll(async () => (await dash.server.client.get(`/api/hosts/${id}`)).body.upgrade?.version).toBe('1.2.0-beta.1');
    expect((await heartbeat(dash.server, token, { hostname: 'pve-settings' })).body.collectors).toEqual({ metrics: true, configs: false, storage: false, backups: true });
    // Only what changed was sent: one audit entry naming those fields.
    const entry = (await dash.server.client.get('/api/audit')).body.find((e: { action: string }) => e.action === 'host.update');
    expect(entry.changes.map((c: { field: string }) => c.field)).toEqual(['agent_channel', 'agent_pin', 'collectors.configs', 'collectors.storage']);

    // A stable channel under a beta pin is refused with the reason, and nothing changes.
    await card.getByRole('button', { name: 'Edit agent settings…' }).click();
    await card.getByLabel('Release channel').selectOption('stable');
    await card.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => card.getByRole('alert').textContent()).toContain('pinned to the beta version');
    expect((await dash.server.client.get(`/api/hosts/${id}`)).body.agent_channel).toBe('beta');

    const operator = await dash.newPage();
    await signIn(operator, dash.server, 'operator', `/hosts/${id}`);
    const read = operator.getByTestId('agent-settings');
    await expect.poll(() => read.getByTestId('agent-pin').textContent()).toBe('1.2.0-beta.1');
    expect(await read.getByRole('button').count()).toBe(0);
    expect(dash.errors).toEqual([]);
  });
});
