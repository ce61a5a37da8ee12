// A host agent's credentials are weapons in the wrong hands: what a host (or anyone holding an
// enrollment token) can do to other hosts and to the registry, tried against the BUILT server
// (dist/server/main.js in its own process) over real HTTP on 127.0.0.1.
import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { TestClient } from './helpers/http.js';

const root = path.resolve(import.meta.dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-hosts-attacks-'));
const SETUP_TOKEN = 'hosts-attacks-setup-token';
const shipped = /^HOMEFLEET_AGENT_VERSION="([^"]+)"$/m.exec(fs.readFileSync(path.join(root, 'reporter/host-agent.sh'), 'utf8'))![1]!;

let child: ResultPromise;
let url: string;
let admin: TestClient;

beforeAll(async () => {
  await ensureBuilt();
  child = execa(process.execPath, ['dist/server/main.js'], {
    cwd: root,
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DB_PATH: path.join(dir, 'homefleet.db'),
      FLEET_SETUP_TOKEN: SETUP_TOKEN,
      FLEET_AUTH_ALLOW_HTTP: 'true',
      FLEET_AGENT_ALLOW_HTTP: 'true',
    },
    extendEnv: false,
    reject: false,
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no listening line within 10 s: ${out}`)), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const match = /listening on (http:\/\/[^"\s]+)/.exec(out);
      if (match) (clearTimeout(timer), resolve(match[1]!));
    });
    void child.then(() => (clearTimeout(timer), reject(new Error(`server exited: ${out}`))));
  });
  admin = new TestClient(url);
  const setup = await admin.post('/setup', { setup_token: SETUP_TOKEN, username: 'root', display_name: 'Root', password: 'hosts-attacks-password' });
  expect(setup.status, setup.text).toBe(201);
  expect((await admin.post('/api/auth/login', { username: 'root', password: 'hosts-attacks-password' })).status).toBe(200);
});

afterAll(async () => {
  child?.kill('SIGKILL');
  await child?.catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

let serial = 0;
const anonymous = () => new TestClient(url);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function enrollmentToken(body: Record<string, unknown> = {}): Promise<string> {
  const res = await admin.post('/api/hosts/enrollment-tokens', body);
  expect(res.status, res.text).toBe(201);
  return res.body.token;
}

function enroll(token: string, body: Record<string, unknown>) {
  return anonymous().post('/api/agent/enroll', { hostname: `pve${++serial}`, machine_id: `machine-${serial}`, agent_version: shipped, ...body }, bearer(token));
}

async function enrolledHost(body: Record<string, unknown> = {}): Promise<{ host_id: number; host_token: string }> {
  const res = await enroll(await enrollmentToken(), body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

function heartbeat(token: string, overrides: Record<string, unknown> = {}) {
  return anonymous().post(
    '/api/agent/heartbeat',
    { agent_version: shipped, started_at: '2026-11-22T09:00:00Z', hostname: 'pve', addresses: ['192.0.2.10'], hypervisor_version: '8.2.4', guests: [], ...overrides },
    bearer(token),
  );
}

const guest = (vmid: number, name: string) => ({ vmid, name, type: 'qemu', status: 'running' });

describe('heartbeat strings', () => {
  it('control characters and markup are refused with 400 naming each field, and nothing of the report is stored', async () => {
    const host = await enrolledHost();
    const res = await heartbeat(host.host_token, {
      hypervisor_version: '8.2.4\u0007',
      addresses: ['192.0.2.10\n'],
      guests: [
        { ...guest(4100, 'web\u0000'), status: 'run\u001bning' },
        guest(4101, '\u001b[2J\u001b[31mred'),
        guest(4102, '<img src=x onerror=alert(1)>'),
        guest(4103, 'evil\u202egnp.exe'),
      ],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      ['addresses.0', 'guests.0.name', 'guests.0.status', 'guests.1.name', 'guests.2.name', 'guests.3.name', 'hypervisor_version'].sort(),
    );
    expect(res.body.errors.find((e: { field: string }) => e.field === 'guests.1.name').message).toBe('must not contain control characters');
    expect(res.body.errors.find((e: { field: string }) => e.field === 'guests.2.name').message).toBe('must not contain < or >');
    const stored = (await admin.get(`/api/hosts/${host.host_id}`)).body;
    expect(stored).toMatchObject({ guests: [], last_heartbeat_at: null, hypervisor_version: '' });
    // The same host with clean strings is taken.
    expect((await heartbeat(host.host_token, { guests: [guest(4100, 'web')] })).status).toBe(200);
  });
});

describe('a vmid claimed by another host', () => {
  it('is a conflict shown on both hosts and never applied: not by sync_registry, not by apply all, not by naming it', async () => {
    expect((await admin.post('/api/instances', { vmid: 5100, name: 'web', state: 'deployed', stack: 'development' })).status).toBe(201);
    const victim = await enrolledHost({ hostname: 'pve-victim' });
    expect((await heartbeat(victim.host_token, { hostname: 'pve-victim', guests: [guest(5100, 'web')] })).status).toBe(200);
    const attacker = await enrolledHost({ hostname: 'pve-attacker' });
    expect((await admin.patch(`/api/hosts/${attacker.host_id}`, { sync_registry: true })).status).toBe(200);

    // With sync_registry on, this heartbeat would apply the attacker's drift at once.
    expect((await heartbeat(attacker.host_token, { hostname: 'pve-attacker', guests: [guest(5100, 'pwned')] })).status).toBe(200);
    expect((await admin.get('/api/instances/5100')).body.name).toBe('web');

    const onAttacker = (await admin.get(`/api/hosts/${attacker.host_id}`)).body.drift;
    expect(onAttacker).toEqual([
      { kind: 'conflict', vmid: 5100, guest_name: 'pwned', instance_name: 'web', other_hosts: [{ id: victim.host_id, hostname: 'pve-victim' }] },
    ]);
    const onVictim = (await admin.get(`/api/hosts/${victim.host_id}`)).body.drift;
    expect(onVictim).toEqual([{ kind: 'conflict', vmid: 5100, guest_name: 'web', instance_name: 'web', other_hosts: [{ id: attacker.host_id, hostname: 'pve-attacker' }] }]);
    const listed = (await admin.get('/api/hosts')).body as { id: number; drift_count: number }[];
    expect(listed.find((h) => h.id === victim.host_id)!.drift_count).toBeGreaterThanOrEqual(1);

    const all = await admin.post(`/api/hosts/${attacker.host_id}/drift/apply`, { all: true });
    expect(all.status).toBe(200);
    expect(all.body.skipped).toEqual([{ vmid: 5100, error: `also reported by pve-victim (host ${victim.host_id}): not applied until only one host reports it` }]);
    for (const id of [attacker.host_id, victim.host_id]) {
      const named = await admin.post(`/api/hosts/${id}/drift/apply`, { items: [{ vmid: 5100 }] });
      expect(named.body).toMatchObject({ applied: [], skipped: [{ vmid: 5100 }] });
    }
    expect((await admin.get('/api/instances/5100')).body.name).toBe('web');
    const history = (await admin.get('/api/instances/5100/history')).body as { changed_by: string | null }[];
    expect(history.filter((h) => h.changed_by?.startsWith('agent:'))).toEqual([]);
  });
});

describe('a production instance', () => {
  it('is never renamed by sync_registry or apply all, only by applying its own item', async () => {
    expect((await admin.post('/api/instances', { vmid: 6100, name: 'prod-db', state: 'deployed', stack: 'production' })).status).toBe(201);
    expect((await admin.post('/api/instances', { vmid: 6101, name: 'dev-box', state: 'deployed', stack: 'development' })).status).toBe(201);
    const host = await enrolledHost({ hostname: 'pve-prod' });
    expect((await admin.patch(`/api/hosts/${host.host_id}`, { sync_registry: true })).status).toBe(200);
    expect((await heartbeat(host.host_token, { hostname: 'pve-prod', guests: [guest(6100, 'hijacked'), guest(6101, 'dev-box-2')] })).status).toBe(200);
    // sync_registry renamed the development instance and left production alone.
    expect((await admin.get('/api/instances/6101')).body.name).toBe('dev-box-2');
    expect((await admin.get('/api/instances/6100')).body.name).toBe('prod-db');
    expect((await admin.get(`/api/hosts/${host.host_id}`)).body.drift).toEqual([
      { kind: 'name_differs', vmid: 6100, guest_name: 'hijacked', instance_name: 'prod-db', instance_stack: 'production' },
    ]);

    const all = await admin.post(`/api/hosts/${host.host_id}/drift/apply`, { all: true });
    expect(all.body).toEqual({ applied: [], skipped: [{ vmid: 6100, error: 'a production instance is renamed only by applying its own item' }] });
    expect((await admin.get('/api/instances/6100')).body.name).toBe('prod-db');

    const named = await admin.post(`/api/hosts/${host.host_id}/drift/apply`, { items: [{ vmid: 6100 }] });
    expect(named.body.applied).toEqual([expect.objectContaining({ vmid: 6100, kind: 'name_differs' })]);
    expect((await admin.get('/api/instances/6100')).body.name).toBe('hijacked');
  });
});

describe('heartbeat flood', () => {
  it('more than 5 heartbeats from one host within an interval get 429 with Retry-After; the first 5 and other hosts are served', async () => {
    const host = await enrolledHost();
    const other = await enrolledHost();
    const guests = Array.from({ length: 2000 }, (_, i) => guest(100_000 + i, `g${i}`));
    // Sent at once, as a flooding host would: each parallel request must be counted.
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => heartbeat(host.host_token, { guests: guests.map((g) => ({ ...g, status: i % 2 ? 'stopped' : 'running' })) })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429]);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(refused.body).toEqual({ error: 'too many heartbeats from this host' });
      const retry = Number(refused.headers.get('retry-after'));
      // The default interval is 30 s: the next heartbeat is allowed within one.
      expect(Number.isInteger(retry) && retry >= 1 && retry <= 30, String(retry)).toBe(true);
    }
    expect((await heartbeat(other.host_token)).status).toBe(200);
    expect((await anonymous().get('/api/health')).status).toBe(200);
  });
});

describe('host takeover in the re-bind window', () => {
  it('after revoke-token, an ordinary enrollment token cannot enroll with the victim machine id; a re-bind token made for the host can', async () => {
    const victim = await enrolledHost({ machine_id: 'victim-machine', hostname: 'pve-victim-2' });
    expect((await heartbeat(victim.host_token, { hostname: 'pve-victim-2', guests: [guest(7100, 'victim-web')] })).status).toBe(200);
    // The machine id is no secret: any viewer reads it.
    expect((await admin.get(`/api/hosts/${victim.host_id}`)).body.machine_id).toBe('victim-machine');
    const attackerToken = await enrollmentToken({ max_uses: 5 });

    expect((await admin.post(`/api/hosts/${victim.host_id}/revoke-token`)).status).toBe(204);
    const takeover = await enroll(attackerToken, { machine_id: 'victim-machine', hostname: 'evil' });
    expect(takeover.status, takeover.text).toBe(409);
    expect(takeover.body).toEqual({ error: 'machine already enrolled' });
    // The old allowance is gone too: it would have opened the same window.
    expect((await admin.patch(`/api/hosts/${victim.host_id}`, { allow_rebind: true })).status).toBe(400);
    expect((await enroll(attackerToken, { machine_id: 'victim-machine', hostname: 'evil' })).status).toBe(409);
    expect((await admin.get(`/api/hosts/${victim.host_id}`)).body).toMatchObject({ hostname: 'pve-victim-2', guests: [{ vmid: 7100 }], allow_rebind: false });

    const rebind = await admin.post('/api/hosts/enrollment-tokens', { host_id: victim.host_id });
    expect(rebind.body).toMatchObject({ host_id: victim.host_id, max_uses: 1 });
    expect((await admin.get(`/api/hosts/${victim.host_id}`)).body.allow_rebind).toBe(true);
    // Not usable for another machine, nor for a new one.
    expect((await enroll(rebind.body.token, { machine_id: 'someone-else' })).status).toBe(409);
    const back = await enroll(rebind.body.token, { machine_id: 'victim-machine', hostname: 'pve-victim-2' });
    expect(back.status, back.text).toBe(201);
    expect(back.body.host_id).toBe(victim.host_id);
    expect((await heartbeat(back.body.host_token, { hostname: 'pve-victim-2' })).status).toBe(200);
  });
});

describe('agent versions', () => {
  it('the host JSON says whether a newer agent ships (upgrade_available)', async () => {
    const older = await enrolledHost({ agent_version: '0.0.1' });
    const current = await enrolledHost({ agent_version: shipped });
    const hosts = (await admin.get('/api/hosts')).body as { id: number; upgrade_available: boolean }[];
    expect(hosts.find((h) => h.id === older.host_id)!.upgrade_available).toBe(true);
    expect(hosts.find((h) => h.id === current.host_id)!.upgrade_available).toBe(false);
    expect((await admin.get(`/api/hosts/${older.host_id}`)).body.upgrade_available).toBe(true);
  });

  it('a downgrade is requested only as an explicit rollback, and the command then says so', async () => {
    const host = await enrolledHost({ agent_version: '99.0.0' });
    const refused = await admin.post(`/api/hosts/${host.host_id}/upgrade`, { version: shipped });
    expect(refused).toMatchObject({ status: 409, body: { error: `${shipped} is older than the agent's 99.0.0: send "rollback": true to roll back` } });
    expect((await admin.post(`/api/hosts/${host.host_id}/upgrade`, { version: shipped, rollback: true })).status).toBe(202);
    const beat = await heartbeat(host.host_token, { agent_version: '99.0.0' });
    expect(beat.body.commands).toEqual([{ type: 'upgrade', version: shipped, rollback: true }]);

    const up = await enrolledHost({ agent_version: '0.0.1' });
    expect((await admin.post(`/api/hosts/${up.host_id}/upgrade`, {})).status).toBe(202);
    expect((await heartbeat(up.host_token, { agent_version: '0.0.1' })).body.commands).toEqual([{ type: 'upgrade', version: shipped }]);
  });
});
