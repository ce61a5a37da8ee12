import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { agentDir, enrolledHost, heartbeat, startHostServer, writeAgent, type Enrolled } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// PRODUCT.md "Release channels" and "Plugins", in-process: hosts on the stable or beta channel, pinned
// or not, with their collectors; offered, asked-for and automatic upgrades. Shipped: 1.1.0 (current),
// 1.0.0 and the pre-release 1.2.0-beta.1 (kept). The built server's run is test/agent-channels.test.ts.

let server: TestServer;
const clock = manualClock();
beforeAll(async () => {
  const dir = agentDir('1.1.0');
  const kept = path.join(dir, 'kept');
  writeAgent(path.join(kept, '1.0.0'), '1.0.0');
  writeAgent(path.join(kept, '1.2.0-beta.1'), '1.2.0-beta.1');
  server = await startHostServer({ clock, hosts: { agentDir: dir, keptAgentsDir: kept } });
});
afterAll(() => server.stop());

async function host(name: string): Promise<Enrolled> {
  const h = await enrolledHost(server, { hostname: name });
  expect((await heartbeat(server, h.host_token, { hostname: name })).status).toBe(200);
  return h;
}
const patch = (h: Enrolled, body: unknown) => server.client.patch(`/api/hosts/${h.host_id}`, body);
const get = async (h: Enrolled) => (await server.client.get(`/api/hosts/${h.host_id}`)).body;
const upgrades = async (h: Enrolled) => ((await heartbeat(server, h.host_token)).body.commands as { type: string }[]).filter((c) => c.type === 'upgrade');
const ALWAYS = { windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '00:00' }], timezone: 'UTC', auto_upgrade: true, muted: false };

describe('agent release channels and pins', () => {
  it('offers the newest version of the host channel, and nothing to a pinned host', async () => {
    const stable = await host('stable');
    const beta = await host('beta');
    const pinned = await host('pinned');
    expect((await patch(beta, { agent_channel: 'beta' })).status).toBe(200);
    expect((await patch(pinned, { agent_pin: '1.0.0' })).status).toBe(200);
    expect(await get(stable)).toMatchObject({ agent_channel: 'stable', agent_pin: null, upgrade_available: true, upgrade_to: '1.1.0' });
    expect(await get(beta)).toMatchObject({ agent_channel: 'beta', upgrade_available: true, upgrade_to: '1.2.0-beta.1' });
    expect(await get(pinned)).toMatchObject({ agent_pin: '1.0.0', upgrade_available: false, upgrade_to: null });
    // The agent.outdated alert reads upgrade_available: a pinned host is not outdated.
    const list = (await server.client.get('/api/hosts')).body as { id: number; upgrade_available: boolean }[];
    expect(list.find((h) => h.id === pinned.host_id)!.upgrade_available).toBe(false);
  });

  it('an upgrade asked for follows the channel and moves a pinned host only to its pin (409 naming it)', async () => {
    const stable = await host('ask-stable');
    const beta = await host('ask-beta');
    const pinned = await host('ask-pinned');
    expect((await patch(beta, { agent_channel: 'beta' })).status).toBe(200);
    expect((await patch(pinned, { agent_pin: '1.1.0' })).status).toBe(200);

    expect(await server.client.post(`/api/hosts/${stable.host_id}/upgrade`, { version: '1.2.0-beta.1' })).toMatchObject({ status: 409 });
    expect(await server.client.post(`/api/hosts/${pinned.host_id}/upgrade`, { version: '1.2.0-beta.1' })).toMatchObject({
      status: 409,
      body: { error: 'host ask-pinned is pinned to agent 1.1.0: unpin it (agent_pin: null) before moving it to 1.2.0-beta.1' },
    });
    expect(await server.client.post(`/api/hosts/${stable.host_id}/upgrade`, { version: '9.9.9' })).toMatchObject({ status: 400, body: { error: 'unknown agent version' } });
    for (const h of [stable, beta, pinned]) expect((await server.client.post(`/api/hosts/${h.host_id}/upgrade`, {})).status).toBe(202);
    expect(await upgrades(stable)).toEqual([{ type: 'upgrade', version: '1.1.0' }]);
    expect(await upgrades(beta)).toEqual([{ type: 'upgrade', version: '1.2.0-beta.1' }]);
    expect(await upgrades(pinned)).toEqual([{ type: 'upgrade', version: '1.1.0' }]);
    // operations.requestUpgrade, which campaigns call (here through the host service), keeps the same rule.
    expect(() => server.hosts.requestUpgrade(pinned.host_id, { version: '1.0.0', rollback: true }, { actor: 'admin' })).toThrow(
      expect.objectContaining({ status: 409, body: { error: expect.stringContaining('pinned to agent 1.1.0') } }),
    );
  });

  it('automatic upgrades follow the channel and never move a pinned host', async () => {
    const stable = await host('auto-stable');
    const beta = await host('auto-beta');
    const pinned = await host('auto-pinned');
    expect((await patch(beta, { agent_channel: 'beta' })).status).toBe(200);
    expect((await patch(pinned, { agent_pin: '1.0.0' })).status).toBe(200);
    for (const h of [stable, beta, pinned]) expect((await server.client.put(`/api/hosts/${h.host_id}/maintenance`, ALWAYS)).status).toBe(200);
    server.hosts.sweep();
    expect((await get(stable)).upgrade).toMatchObject({ state: 'pending', version: '1.1.0' });
    expect((await get(beta)).upgrade).toMatchObject({ state: 'pending', version: '1.2.0-beta.1' });
    expect((await get(pinned)).upgrade).toBeNull();
    expect(await upgrades(pinned)).toEqual([]);
  });

  it('a pin or a switch to stable calls off a pending upgrade it no longer allows, and only that one', async () => {
    const pinned = await host('off-pinned');
    expect((await server.client.post(`/api/hosts/${pinned.host_id}/upgrade`, {})).status).toBe(202);
    expect((await patch(pinned, { agent_pin: '1.0.0' })).body).toMatchObject({ upgrade: null });
    expect(await upgrades(pinned)).toEqual([]);

    const kept = await host('off-kept');
    expect((await server.client.post(`/api/hosts/${kept.host_id}/upgrade`, {})).status).toBe(202);
    expect((await patch(kept, { agent_pin: '1.1.0' })).body).toMatchObject({ upgrade: { state: 'pending', version: '1.1.0' } });

    const back = await host('off-back');
    expect((await patch(back, { agent_channel: 'beta' })).status).toBe(200);
    expect((await server.client.post(`/api/hosts/${back.host_id}/upgrade`, {})).status).toBe(202);
    expect((await patch(back, { agent_channel: 'stable' })).body).toMatchObject({ agent_channel: 'stable', upgrade: null, upgrade_to: '1.1.0' });
    const cancelled = (await server.client.get(`/api/operations?host_id=${back.host_id}`)).body as { type: string; status: string }[];
    expect(cancelled).toEqual([expect.objectContaining({ type: 'upgrade', status: 'cancelled' })]);
  });

  it('a stable host cannot keep a beta pin; a pin no longer shipped does not block other settings', async () => {
    const h = await host('pin-rules');
    expect((await patch(h, { agent_channel: 'beta', agent_pin: '1.2.0-beta.1' })).status).toBe(200);
    expect(await patch(h, { agent_channel: 'stable' })).toMatchObject({
      status: 400,
      body: { errors: [{ field: 'agent_channel', message: 'the host is pinned to the beta version 1.2.0-beta.1: unpin it or pin a stable version first' }] },
    });
    expect((await patch(h, { agent_channel: 'stable', agent_pin: null })).body).toMatchObject({ agent_channel: 'stable', agent_pin: null });
  });

  it('collectors are saved per host, merged field by field, and sent in every heartbeat answer', async () => {
    const h = await host('collect');
    expect((await heartbeat(server, h.host_token)).body.collectors).toEqual({ metrics: true, configs: true, storage: true, backups: true });
    expect((await patch(h, { collectors: { configs: false } })).body.collectors).toEqual({ metrics: true, configs: false, storage: true, backups: true });
    expect((await patch(h, { collectors: { backups: false, metrics: false } })).body.collectors).toEqual({ metrics: false, configs: false, storage: true, backups: false });
    expect((await heartbeat(server, h.host_token)).body).toEqual({ heartbeat_interval_s: 30, commands: [], collectors: { metrics: false, configs: false, storage: true, backups: false } });
  });

  it('a deleted host takes no settings (409), and nothing half-written remains after a refused PATCH', async () => {
    const h = await host('gone');
    expect((await server.client.delete(`/api/hosts/${h.host_id}?force=true`)).status).toBe(200);
    expect(await patch(h, { collectors: { metrics: false } })).toMatchObject({ status: 409, body: { error: 'host is deleted' } });
    const other = await host('half');
    expect((await patch(other, { sync_registry: true, collectors: { storage: false }, agent_pin: '0.0.1' })).status).toBe(400);
    expect(await get(other)).toMatchObject({ sync_registry: false, agent_pin: null, collectors: { storage: true } });
  });
});
