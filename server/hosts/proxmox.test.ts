import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { enrolledHost, heartbeat, startHostServer } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// PRODUCT.md "Agents on real Proxmox": templates are never drift, and a vmid belongs to the online
// host that reports it ("vmids are unique per cluster, not per host").

const TEMPLATE = { vmid: 9000, name: 'debian-12-template', type: 'qemu', status: 'stopped', template: true };
const WEB = { vmid: 100, name: 'web', type: 'qemu', status: 'running', template: false };

let server: TestServer;
let clock: ReturnType<typeof manualClock>;
beforeEach(async () => {
  clock = manualClock();
  server = await startHostServer({ clock });
});
afterEach(() => server.stop());

const detail = async (id: number) => (await server.client.get(`/api/hosts/${id}`)).body;

describe('templates', () => {
  it('are listed with template true and are never drift: apply all and sync_registry register nothing for them', async () => {
    const host = await enrolledHost(server, { hostname: 'pve1' });
    expect((await heartbeat(server, host.host_token, { guests: [TEMPLATE, WEB, { ...TEMPLATE, vmid: 9001, name: 'ct-template', type: 'lxc', template: 1 }] })).status).toBe(200);
    const shown = await detail(host.host_id);
    expect(shown.guests).toEqual([
      { vmid: 100, name: 'web', type: 'qemu', status: 'running', template: false, lock: null },
      { vmid: 9000, name: 'debian-12-template', type: 'qemu', status: 'stopped', template: true, lock: null },
      { vmid: 9001, name: 'ct-template', type: 'lxc', status: 'stopped', template: true, lock: null },
    ]);
    expect(shown.drift).toEqual([{ kind: 'guest_without_instance', vmid: 100, guest_name: 'web', guest_type: 'qemu' }]);
    expect((await server.client.get('/api/hosts')).body[0]).toMatchObject({ guest_count: 3, drift_count: 1 });

    const applied = await server.client.post(`/api/hosts/${host.host_id}/drift/apply`, { all: true });
    expect(applied.body).toEqual({ applied: [{ kind: 'guest_without_instance', vmid: 100, guest_name: 'web', guest_type: 'qemu' }], skipped: [] });
    const named = await server.client.post(`/api/hosts/${host.host_id}/drift/apply`, { items: [{ vmid: 9000 }] });
    expect(named.body).toEqual({ applied: [], skipped: [{ vmid: 9000, error: 'no drift to apply for this vmid' }] });

    expect((await server.client.patch(`/api/hosts/${host.host_id}`, { sync_registry: true })).status).toBe(200);
    await heartbeat(server, host.host_token, { guests: [TEMPLATE, WEB, { ...TEMPLATE, vmid: 9001, name: 'ct-template', type: 'lxc', template: 1 }] });
    expect((await server.client.get('/api/instances')).body.map((i: { vmid: number }) => i.vmid)).toEqual([100]);
  });

  it('a template two online hosts report is no conflict; a guest that stops being a template becomes drift', async () => {
    const a = await enrolledHost(server, { hostname: 'pve-a' });
    const b = await enrolledHost(server, { hostname: 'pve-b' });
    await heartbeat(server, a.host_token, { hostname: 'pve-a', guests: [TEMPLATE] });
    await heartbeat(server, b.host_token, { hostname: 'pve-b', guests: [TEMPLATE] });
    expect((await detail(a.host_id)).drift).toEqual([]);
    expect((await detail(b.host_id)).drift).toEqual([]);
    expect((await server.client.get('/api/hosts')).body.map((h: { drift_count: number }) => h.drift_count)).toEqual([0, 0]);
    await heartbeat(server, a.host_token, { hostname: 'pve-a', guests: [{ ...TEMPLATE, template: '0' }] });
    expect((await detail(a.host_id)).drift).toEqual([{ kind: 'guest_without_instance', vmid: 9000, guest_name: 'debian-12-template', guest_type: 'qemu' }]);
  });

  it('refuses a template flag or a lock that is not one, with 400 naming the field', async () => {
    const host = await enrolledHost(server);
    const res = await heartbeat(server, host.host_token, {
      guests: [{ ...WEB, template: 'yes' }, { ...WEB, vmid: 101, lock: 'Backup' }, { ...WEB, vmid: 102, lock: 'backup; rm -rf /' }, { ...WEB, vmid: 103, lock: 'x'.repeat(33) }],
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['guests.0.template', 'guests.1.lock', 'guests.2.lock', 'guests.3.lock']);
    // Guests are checked a slice at a time: a field deep in the list is still named by its index.
    const many = Array.from({ length: 1200 }, (_, i) => ({ ...WEB, vmid: 1000 + i, name: i === 1100 ? '<b>' : `g${i}` }));
    const deep = await heartbeat(server, host.host_token, { guests: many, uptime_s: 'long' });
    expect(deep.body).toEqual({ errors: [{ field: 'uptime_s', message: 'must be a non-negative number of seconds' }, { field: 'guests.1100.name', message: 'must not contain < or >' }] });
    expect((await detail(host.host_id)).guests).toEqual([]);
    expect((await heartbeat(server, host.host_token, { guests: many.slice(0, 1000) })).status).toBe(200);
    expect((await detail(host.host_id)).guests).toHaveLength(1000);
  });
});

describe('a vmid moves with the online host', () => {
  it('a vmid last reported by an offline host is no conflict on the online host that now reports it; the instance moves there', async () => {
    expect((await server.client.post('/api/instances', buildInstance({ vmid: 101, name: 'app', state: 'deployed', stack: 'development' }))).status).toBe(201);
    const a = await enrolledHost(server, { hostname: 'pve-a' });
    const b = await enrolledHost(server, { hostname: 'pve-b' });
    await heartbeat(server, a.host_token, { hostname: 'pve-a', guests: [{ vmid: 101, name: 'app', type: 'qemu', status: 'running' }] });
    expect((await server.client.get('/api/instances/101')).body.host).toEqual({ id: a.host_id, name: 'pve-a' });
    // Three intervals without a heartbeat: A is offline (and the sweep says so).
    clock.advance(90_001);
    server.hosts.sweep();
    await heartbeat(server, b.host_token, { hostname: 'pve-b', guests: [{ vmid: 101, name: 'app', type: 'qemu', status: 'running' }] });
    expect((await detail(b.host_id)).drift).toEqual([]);
    expect((await detail(a.host_id)).drift).toEqual([]);
    expect((await server.client.get('/api/hosts')).body.map((h: { hostname: string; drift_count: number }) => [h.hostname, h.drift_count])).toEqual([
      ['pve-a', 0],
      ['pve-b', 0],
    ]);
    expect((await server.client.get('/api/instances/101')).body).toMatchObject({ host: { id: b.host_id, name: 'pve-b' }, guest_status: 'running' });
    expect((await server.client.get(`/api/instances?host_id=${b.host_id}`)).body.map((i: { vmid: number }) => i.vmid)).toEqual([101]);

    // Both online again with the same vmid: that is a conflict, shown on both.
    await heartbeat(server, a.host_token, { hostname: 'pve-a', guests: [{ vmid: 101, name: 'app', type: 'qemu', status: 'stopped' }] });
    expect((await detail(b.host_id)).drift).toEqual([{ kind: 'conflict', vmid: 101, guest_name: 'app', instance_name: 'app', other_hosts: [{ id: a.host_id, hostname: 'pve-a' }] }]);
    expect((await server.client.get('/api/hosts')).body.map((h: { drift_count: number }) => h.drift_count)).toEqual([1, 1]);
  });

  it('among offline hosts the most recent report wins', async () => {
    const a = await enrolledHost(server, { hostname: 'pve-a' });
    const b = await enrolledHost(server, { hostname: 'pve-b' });
    await heartbeat(server, a.host_token, { hostname: 'pve-a', guests: [{ vmid: 300, name: 'x', type: 'lxc', status: 'running' }] });
    clock.advance(10_000);
    await heartbeat(server, b.host_token, { hostname: 'pve-b', guests: [{ vmid: 300, name: 'x', type: 'lxc', status: 'stopped' }] });
    clock.advance(200_000);
    server.hosts.sweep();
    expect((await server.client.post('/api/instances', buildInstance({ vmid: 300, name: 'x' }))).status).toBe(201);
    expect((await server.client.get('/api/instances/300')).body).toMatchObject({ host: { id: b.host_id, name: 'pve-b' }, guest_status: 'stopped' });
  });
});
