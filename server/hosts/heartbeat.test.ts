import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { enrolledHost, heartbeat, heartbeatBody, startHostServer } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';
import { parseHeartbeat } from './schema.js';

// A heartbeat's guest list is compared with the stored one before its transaction, and the
// transaction writes only the rows that differ: a status change in a 10,000-guest list was a
// delete and 10,000 inserts.

let server: TestServer;
beforeEach(async () => {
  server = await startHostServer();
});
afterEach(() => server.stop());

const guest = (vmid: number, status = 'running') => ({ vmid, name: `guest-${vmid}`, type: 'qemu', status });
const stored = async (hostId: number) => (await server.client.get(`/api/hosts/${hostId}`)).body.guests.map((g: { vmid: number; status: string }) => [g.vmid, g.status]);

/** Counts the rows each heartbeat from now on writes into host_guests. */
function countGuestWrites(): () => Record<string, number> {
  server.db.exec(`
    CREATE TEMP TABLE guest_writes (op TEXT NOT NULL);
    CREATE TEMP TRIGGER guest_inserts AFTER INSERT ON main.host_guests BEGIN INSERT INTO guest_writes VALUES ('insert'); END;
    CREATE TEMP TRIGGER guest_updates AFTER UPDATE ON main.host_guests BEGIN INSERT INTO guest_writes VALUES ('update'); END;
    CREATE TEMP TRIGGER guest_deletes AFTER DELETE ON main.host_guests BEGIN INSERT INTO guest_writes VALUES ('delete'); END;
  `);
  return () => {
    const counts = Object.fromEntries(server.db.prepare<[], [string, number]>('SELECT op, count(*) FROM guest_writes GROUP BY op').raw().all());
    server.db.exec('DELETE FROM guest_writes');
    return counts;
  };
}

describe('a heartbeat stores its guest list', () => {
  it('writing only what changed: of 2,000 guests one stopped and one gone are two rows, the same list again none', async () => {
    const host = await enrolledHost(server, { hostname: 'pve1' });
    const list = Array.from({ length: 2_000 }, (_, i) => guest(1_000 + i));
    expect((await heartbeat(server, host.host_token, { guests: list })).status).toBe(200);
    const writes = countGuestWrites();

    const changed = list.slice(0, -1).map((g) => (g.vmid === 1_005 ? guest(1_005, 'stopped') : g));
    expect((await heartbeat(server, host.host_token, { guests: changed })).status).toBe(200);
    expect(writes()).toEqual({ insert: 1, delete: 1 });
    expect(await stored(host.host_id)).toEqual(changed.map((g) => [g.vmid, g.status]));

    expect((await heartbeat(server, host.host_token, { guests: changed })).status).toBe(200);
    expect(writes()).toEqual({});
  });

  it('from two heartbeats worked out against the same stored list, as the one committed last reported it', async () => {
    const host = await enrolledHost(server, { hostname: 'pve1' });
    expect((await heartbeat(server, host.host_token, { guests: [guest(1), guest(2)] })).status).toBe(200);
    const first = await parseHeartbeat(heartbeatBody({ guests: [guest(1), guest(2), guest(3)] }));
    const second = await parseHeartbeat(heartbeatBody({ guests: [guest(2, 'paused'), guest(4)] }));
    // Both compare with [1, 2] before either commits; the second then finds [1, 2, 3] stored.
    await Promise.all([server.hosts.heartbeat(host.host_token, first), server.hosts.heartbeat(host.host_token, second)]);
    expect(await stored(host.host_id)).toEqual([[2, 'paused'], [4, 'running']]);

    // The stored hash is that list's: the same report again writes nothing.
    const writes = countGuestWrites();
    expect((await heartbeat(server, host.host_token, { guests: [guest(2, 'paused'), guest(4)] })).status).toBe(200);
    expect(writes()).toEqual({});
  });

  it('announces each registry instance whose guest appeared, changed status, went away or whose host was renamed, with what moved', async () => {
    for (const vmid of [101, 102]) expect((await server.client.post('/api/instances', buildInstance({ vmid, name: `app-${vmid}` }))).status).toBe(201);
    const updated: [number, string[]][] = [];
    server.context.bus.on('instance.updated', ({ instance, changed }) => updated.push([instance.vmid, changed]));
    const host = await enrolledHost(server, { hostname: 'pve1' });
    const moves = async (overrides: Record<string, unknown>) => {
      updated.length = 0;
      expect((await heartbeat(server, host.host_token, overrides)).status).toBe(200);
      return updated.sort((a, b) => a[0] - b[0]);
    };
    expect(await moves({ guests: [guest(101), guest(102), guest(900)] })).toEqual([[101, ['host', 'guest_status']], [102, ['host', 'guest_status']]]);
    expect(await moves({ guests: [guest(101, 'stopped'), guest(102), guest(900)] })).toEqual([[101, ['guest_status']]]);
    expect(await moves({ guests: [guest(101, 'stopped'), guest(102), guest(900)] })).toEqual([]);
    expect(await moves({ hostname: 'pve-renamed', guests: [guest(101, 'stopped'), guest(102), guest(900)] })).toEqual([[101, ['host']], [102, ['host']]]);
    expect(await moves({ hostname: 'pve-renamed', guests: [guest(101, 'stopped')] })).toEqual([[102, ['host', 'guest_status']]]);
  });
});
