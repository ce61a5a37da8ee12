import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { bearer, enrolledHost, heartbeat, startHostServer, type Enrolled } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// PRODUCT.md "Raw configs and diffs": the agent uploads a guest's redacted config when its hash
// changes; the server keeps the last 20 versions per guest and serves text and unified diffs.

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const config = (memory: number) => `boot: order=scsi0\ncipassword: **REDACTED**\ncores: 2\nmemory: ${memory}\nname: web\nnet0: virtio=BC:24:11:00:00:01,bridge=vmbr0\n`;

let server: TestServer;
let host: Enrolled;
const clock = manualClock();
beforeAll(async () => {
  server = await startHostServer({ clock });
  host = await enrolledHost(server);
  await heartbeat(server, host.host_token, { guests: [{ vmid: 100, name: 'web', type: 'qemu', status: 'running', config_sha256: sha(config(2048)) }] });
});
afterAll(() => server.stop());

const upload = (body: unknown) => server.anonymous().post('/api/agent/guest-configs', body, bearer(host.host_token));
const configs = (suffix = '') => server.client.get(`/api/hosts/${host.host_id}/guests/100/configs${suffix}`);

describe('guest configs', () => {
  it('the heartbeat shows the config hash; an upload is kept once per hash; text and a unified diff are served', async () => {
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.guests[0]).toMatchObject({ vmid: 100, config_sha256: sha(config(2048)) });
    expect((await upload({ vmid: 100, sha256: sha(config(2048)), text: config(2048) })).status).toBe(204);
    expect((await upload({ vmid: 100, sha256: sha(config(2048)), text: config(2048) })).status).toBe(204);
    clock.advance(1000);
    expect((await upload({ vmid: 100, sha256: sha(config(4096)), text: config(4096) })).status).toBe(204);
    const list = (await configs()).body;
    expect(list).toEqual([
      { id: expect.any(Number), sha256: sha(config(4096)), received_at: '2026-11-22T10:00:01.000Z', size: Buffer.byteLength(config(4096)) },
      { id: expect.any(Number), sha256: sha(config(2048)), received_at: '2026-11-22T10:00:00.000Z', size: Buffer.byteLength(config(2048)) },
    ]);
    const text = await configs(`/${list[1].id}`);
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(text.text).toBe(config(2048));
    const diff = await configs(`/${list[0].id}/diff`);
    expect(diff.headers.get('content-type')).toMatch(/^text\/plain/);
    // The two files named by when they came; no `Index:` or `=====` lines above them.
    expect(diff.text).toBe(
      [
        '--- a/100.conf (received 2026-11-22T10:00:00.000Z)',
        '+++ b/100.conf (received 2026-11-22T10:00:01.000Z)',
        '@@ -1,6 +1,6 @@',
        ' boot: order=scsi0',
        ' cipassword: **REDACTED**',
        ' cores: 2',
        '-memory: 2048',
        '+memory: 4096',
        ' name: web',
        ' net0: virtio=BC:24:11:00:00:01,bridge=vmbr0',
        '',
      ].join('\n'),
    );
    expect((await configs(`/${list[1].id}/diff?against=${list[0].id}`)).text).toContain('-memory: 4096\n+memory: 2048');
    expect((await configs('/99999')).status).toBe(404);
    expect((await configs(`/${list[0].id}/diff?against=abc`)).status).toBe(400);
  });

  it('keeps the last 20 versions', async () => {
    for (let i = 0; i < 22; i++) expect((await upload({ vmid: 100, sha256: sha(config(i)), text: config(i) })).status).toBe(204);
    const list = (await configs()).body as { sha256: string }[];
    expect(list).toHaveLength(20);
    expect(list[0]!.sha256).toBe(sha(config(21)));
    expect(list[19]!.sha256).toBe(sha(config(2)));
  });

  it('refuses a hash that does not match, an unredacted secret, too much text, an unlisted guest; readers need diagnostics.read', async () => {
    expect(await upload({ vmid: 100, sha256: sha('other'), text: config(1) })).toMatchObject({ status: 400, body: { errors: [{ field: 'sha256' }] } });
    const secret = `${config(1)}cipassword: hunter2\n`;
    const refused = await upload({ vmid: 100, sha256: sha(secret), text: secret });
    expect(refused).toMatchObject({ status: 400, body: { errors: [{ field: 'text' }] } });
    expect(refused.text).not.toContain('hunter2');
    // Secrets padded with odd whitespace, and key=value secrets inside args and lxc.* values.
    for (const line of [' password: hunter2', 'cipassword\u00a0: hunter2', 'cipassword\r: hunter2', 'args: -spice port=5900,password=hunter2', 'lxc.environment: DB_PASSWORD=hunter2']) {
      const text = `${config(1)}${line}\n`;
      const res = await upload({ vmid: 100, sha256: sha(text), text });
      expect(res, JSON.stringify(line)).toMatchObject({ status: 400, body: { errors: [{ field: 'text' }] } });
      expect(res.text).not.toContain('hunter2');
    }
    const redacted = `${config(7)}args: -spice port=5900,password=**REDACTED**\nlxc.environment: DB_PASSWORD=**REDACTED**\n`;
    expect((await upload({ vmid: 100, sha256: sha(redacted), text: redacted })).status).toBe(204);
    const big = 'x'.repeat(64 * 1024 + 1);
    expect((await upload({ vmid: 100, sha256: sha(big), text: big })).status).toBe(400);
    expect(await upload({ vmid: 555, sha256: sha(config(1)), text: config(1) })).toMatchObject({ status: 404 });
    expect((await server.client.post('/api/agent/guest-configs', { vmid: 100, sha256: sha(config(1)), text: config(1) })).status).toBe(401);
    const viewer = await server.signIn('viewer');
    expect((await viewer.get(`/api/hosts/${host.host_id}/guests/100/configs`)).status).toBe(403);
  });
});

describe('maintenance policies', () => {
  const url = () => `/api/hosts/${host.host_id}/maintenance`;

  it('reads the default, stores a policy for administrators only, audits the change, and refuses bad fields', async () => {
    expect((await server.client.get(url())).body).toMatchObject({ windows: [], auto_upgrade: false, muted: false, window_open: false, updated_by: null });
    const policy = { windows: [{ days: ['sat', 'sun'], start: '22:00', end: '04:00' }], timezone: 'Europe/Berlin', auto_upgrade: true, muted: true };
    const put = await server.client.put(url(), policy);
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ ...policy, window_open: false, updated_by: 'admin', updated_at: '2026-11-22T10:00:01.000Z' });
    expect(server.hosts.isMuted(host.host_id)).toBe(true);
    const [entry] = (await server.client.get('/api/audit?limit=5')).body.filter((e: { action: string }) => e.action === 'host.maintenance');
    expect(entry.changes.map((c: { field: string }) => c.field)).toEqual(['windows', 'timezone', 'auto_upgrade', 'muted']);
    const bad: [unknown, string][] = [
      [{ windows: [{ days: ['mon'], start: '25:00', end: '01:00' }] }, 'windows.0.start'],
      [{ windows: [{ days: ['funday'], start: '01:00', end: '02:00' }] }, 'windows.0.days.0'],
      [{ timezone: 'Mars/Olympus' }, 'timezone'],
      [{ muted: 'yes' }, 'muted'],
    ];
    for (const [body, field] of bad) {
      const res = await server.client.put(url(), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const operator = await server.signIn('operator');
    expect((await operator.put(url(), { muted: false })).status).toBe(403);
    expect((await operator.get(url())).status).toBe(200);
    expect(server.hosts.isMuted(host.host_id)).toBe(true);
    expect((await server.client.get('/api/hosts/999/maintenance')).status).toBe(404);
  });

  it('auto_upgrade asks for the shipped agent by itself, only inside a window', async () => {
    const inside = await enrolledHost(server, { hostname: 'old-in', agent_version: '0.9.0' });
    const outside = await enrolledHost(server, { hostname: 'old-out', agent_version: '0.9.0' });
    for (const h of [inside, outside]) await heartbeat(server, h.host_token, { hostname: 'old', agent_version: '0.9.0' });
    // 2026-11-22 10:00 UTC is a Sunday morning.
    const window = (start: string, end: string) => ({ windows: [{ days: ['sun'], start, end }], timezone: 'UTC', auto_upgrade: true });
    expect((await server.client.put(`/api/hosts/${inside.host_id}/maintenance`, window('09:00', '11:00'))).status).toBe(200);
    expect((await server.client.put(`/api/hosts/${outside.host_id}/maintenance`, window('22:00', '23:00'))).status).toBe(200);
    server.hosts.sweep();
    server.hosts.sweep();
    const upgrades = (await server.client.get('/api/operations?status=pending')).body.filter((o: { type: string }) => o.type === 'upgrade');
    expect(upgrades).toEqual([expect.objectContaining({ host_id: inside.host_id, type: 'upgrade', requested_by: null, params: { version: '1.0.0', from: '0.9.0' } })]);
    expect((await heartbeat(server, inside.host_token, { hostname: 'old', agent_version: '0.9.0' })).body.commands).toEqual([{ type: 'upgrade', version: '1.0.0' }]);
  });
});
