// Deploy and rebuild (PRODUCT.md "Deploy, rebuild and server keys") through the BUILT server
// (dist/server/main.js in its own process) over real HTTP on 127.0.0.1, with a real SQLite file and
// a host that speaks the agent's side of the wire by hand (its heartbeats, command polls and
// results): every route, status and role, each shape of key material in a launch body, the deploy
// spec, rebuilds, and parallel requests.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { bearer, heldPosts } from './helpers/hosts.js';
import { TestClient } from './helpers/http.js';
import { ed25519Line, sshKeygen } from './helpers/ssh-keys.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';
import { healthTimes, whileHealthPolled } from './helpers/health-poll.js';

const SETUP_TOKEN = 'deploy-test-setup-token-0123456789ab';
const KEY_ERROR = { error: 'server keys are saved by an administrator; launch with server_key_ids' };
const CLOUD_CONFIG = '#cloud-config\npackage_update: true\npackages: [nginx]\n';

let server: Headless;
let dbPath: string;
let admin: TestClient;
let operator: TestClient;
let operatorToken: string;
let viewer: TestClient;
let anonymous: TestClient;
let serial = 0;

interface Host {
  id: number;
  token: string;
  agent: TestClient;
}

async function tokenFor(role: 'viewer' | 'operator'): Promise<string> {
  const res = await admin.post('/api/tokens', { name: `${role} script`, role });
  expect(res.status, res.text).toBe(201);
  return res.body.token as string;
}

const TEMPLATE = { vmid: 9000, name: 'debian-12-cloud', type: 'qemu', status: 'stopped', template: true };
const CT = { vmid: 9100, name: 'ct-base', type: 'lxc', status: 'stopped', template: true };

/** A host enrolled through the API that has just beaten with `guests` (the two templates, and more). */
async function enrolledHost(guests: object[] = []): Promise<Host> {
  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: `deploy ${++serial}` });
  expect(enrollment.status, enrollment.text).toBe(201);
  const hostname = `pve-deploy${serial}`;
  const enrolled = await anonymous.post('/api/agent/enroll', { hostname, machine_id: `deploy-machine-${serial}`, agent_version: '1.0.0' }, bearer(enrollment.body.token));
  expect(enrolled.status, enrolled.text).toBe(201);
  const host = { id: enrolled.body.host_id as number, token: enrolled.body.host_token as string, agent: new TestClient(server.local, bearer(enrolled.body.host_token)) };
  await beat(host, hostname, [TEMPLATE, CT, ...guests]);
  return host;
}

async function beat(host: Host, hostname: string, guests: object[]): Promise<void> {
  const res = await host.agent.post('/api/agent/heartbeat', {
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname,
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests,
  });
  expect(res.status, res.text).toBe(200);
}

/** What the agent's command poll hands out now. */
async function poll(host: Host): Promise<any[]> {
  const res = await host.agent.get('/api/agent/commands?wait=0');
  expect([200, 204], res.text).toContain(res.status);
  return res.status === 200 ? res.body.commands : [];
}

const result = (host: Host, id: string, exit_code: number, output = '') => host.agent.post(`/api/agent/operations/${id}/result`, { exit_code, output });

/** A guest deployed from the qemu template and reported running by its host's next heartbeat. */
async function deployed(host: Host, hostname: string, vmid: number, extra: object = {}, others: object[] = []): Promise<void> {
  const res = await admin.post(`/api/hosts/${host.id}/deploy`, { source_vmid: 9000, new_vmid: vmid, name: `app-${vmid}`, ...extra });
  expect(res.status, res.text).toBe(202);
  await poll(host);
  expect((await result(host, res.body.operation_id, 0)).status).toBe(204);
  await beat(host, hostname, [TEMPLATE, CT, ...others, { vmid, name: `app-${vmid}`, type: 'qemu', status: 'running' }]);
}

async function saveKey(name: string): Promise<{ id: number; line: string }> {
  const line = ed25519Line(`${name}@homefleet`);
  const res = await admin.post('/api/server-keys', { name, public_key: line });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, line };
}

/** Rows of the tables a refused launch must not have touched, and everything the server wrote down. */
function footprint(): { counts: number[]; written: string } {
  const db = new Database(dbPath, { readonly: true });
  try {
    const counts = ['instances', 'operations', 'instance_deploys', 'audit_log'].map((t) => db.prepare(`SELECT count(*) FROM ${t}`).pluck().get() as number);
    return { counts, written: JSON.stringify(server.log()) + JSON.stringify(db.prepare('SELECT * FROM audit_log').all()) };
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await ensureBuilt();
  dbPath = tempDbPath();
  server = await startHeadless(
    { DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true', FLEET_HEARTBEAT_INTERVAL_S: '600' },
    { shared: true },
  );
  admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  anonymous = new TestClient(server.local);
  operatorToken = await tokenFor('operator');
  operator = new TestClient(server.local, bearer(operatorToken));
  viewer = new TestClient(server.local, bearer(await tokenFor('viewer')));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

describe('POST /api/hosts/:id/deploy', () => {
  it('queues a deploy: the instance and its spec at once, the keys and config only in the command, removed again when it fails', async () => {
    const host = await enrolledHost();
    const [a, b] = [await saveKey('deploy-alice'), await saveKey('deploy-bob')];
    const config = await admin.post('/api/cloud-configs', { name: 'web-deploy', body: CLOUD_CONFIG });
    expect(config.status, config.text).toBe(201);
    const body = {
      source_vmid: 9000,
      new_vmid: 301,
      name: 'web-1',
      full: true,
      storage: 'local-lvm',
      cores: 2,
      memory_mb: 2048,
      disk_gb: 20,
      network: { bridge: 'vmbr0', vlan: 20, ip: '192.0.2.50/24', gateway: '192.0.2.1' },
      ci_user: 'debian',
      server_key_ids: [a.id, b.id],
      cloud_config_id: config.body.id,
    };
    const res = await operator.post(`/api/hosts/${host.id}/deploy`, body);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ operation_id: expect.any(String), status: 'pending' });

    const instance = await viewer.get('/api/instances/301');
    expect(instance.body).toMatchObject({ vmid: 301, name: 'web-1', state: 'testing', stack: 'development' });
    expect(instance.body.deploy).toMatchObject({
      host_id: host.id,
      source_type: 'qemu',
      source_vmid: 9000,
      source_volume: null,
      server_key_ids: [a.id, b.id],
      server_key_names: ['deploy-alice', 'deploy-bob'],
      cloud_config_id: config.body.id,
      snippets_storage: 'local',
      start: true,
      deployed_by: expect.any(String),
    });
    const op = await viewer.get(`/api/operations/${res.body.operation_id}`);
    expect(op.body).toMatchObject({ type: 'deploy', vmid: 301, action: null, status: 'pending', host_id: host.id });

    const [command] = await poll(host);
    expect(command).toEqual({
      type: 'deploy',
      operation_id: res.body.operation_id,
      new_vmid: 301,
      rebuild: false,
      source: { kind: 'qemu', vmid: 9000 },
      name: 'web-1',
      full: true,
      storage: 'local-lvm',
      cores: 2,
      memory_mb: 2048,
      disk_gb: 20,
      network: body.network,
      ci_user: 'debian',
      ssh_keys: [a.line, b.line],
      cloud_config: CLOUD_CONFIG,
      snippets_storage: 'local',
      start: true,
    });
    // Never in an API read, the audit log or the server's log: the key text and the config body.
    const written = footprint().written + JSON.stringify((await admin.get(`/api/operations/${res.body.operation_id}`)).body);
    expect(written).not.toContain(a.line.split(' ')[1]);
    expect(written).not.toContain('packages: [nginx]');

    expect((await result(host, res.body.operation_id, 1, 'homefleet-agent: the deploy failed at: qm set 301 (exit 2)\n')).status).toBe(204);
    expect((await viewer.get(`/api/operations/${res.body.operation_id}`)).body.status).toBe('failed');
    expect((await viewer.get('/api/instances/301')).status).toBe(404);
  });

  it('deploys from a container template volume, and a succeeded deploy keeps its instance', async () => {
    const host = await enrolledHost();
    const res = await admin.post(`/api/hosts/${host.id}/deploy`, {
      source_volume: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      new_vmid: 302,
      name: 'ct-1',
      storage: 'local-lvm',
      disk_gb: 8,
      state: 'deployed',
      stack: 'production',
      tags: ['Web', 'web', 'edge'],
    });
    expect(res.status, res.text).toBe(202);
    const [command] = await poll(host);
    expect(command).toMatchObject({ source: { kind: 'volume', volume: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst' }, storage: 'local-lvm', disk_gb: 8, ssh_keys: [], start: true });
    expect(command).not.toHaveProperty('full');
    expect((await result(host, res.body.operation_id, 0, 'homefleet-agent: guest 302 deployed\n')).status).toBe(204);
    const instance = (await viewer.get('/api/instances/302')).body;
    // The instance carries the deploy's tags (lower-cased, deduplicated, sorted); the deploy spec no longer keeps a copy.
    expect(instance).toMatchObject({ state: 'deployed', stack: 'production', tags: ['edge', 'web'], deploy: { source_type: 'volume' } });
    expect(instance.deploy).not.toHaveProperty('tags');
  });

  it('answers each refusal with its status, naming the field', async () => {
    const host = await enrolledHost([{ vmid: 110, name: 'busy', type: 'qemu', status: 'running' }]);
    const other = await enrolledHost([{ vmid: 111, name: 'elsewhere', type: 'qemu', status: 'running' }]);
    const base = { source_vmid: 9000, new_vmid: 310, name: 'ok-name' };
    const fieldOf = async (body: object) => {
      const res = await operator.post(`/api/hosts/${host.id}/deploy`, body);
      expect(res.status, res.text).toBe(400);
      return res.body.errors.map((e: { field: string }) => e.field);
    };
    expect(await fieldOf({ ...base, name: 'Not_A_Label' })).toEqual(['name']);
    expect(await fieldOf({ ...base, cores: 0 })).toEqual(['cores']);
    expect(await fieldOf({ ...base, memory_mb: 63 })).toEqual(['memory_mb']);
    expect(await fieldOf({ ...base, disk_gb: 65_537 })).toEqual(['disk_gb']);
    expect(await fieldOf({ ...base, network: { bridge: 'eth0', ip: 'dhcp' } })).toEqual(['network.bridge']);
    expect(await fieldOf({ ...base, network: { bridge: 'vmbr0', ip: 'dhcp', gateway: '192.0.2.1' } })).toEqual(['network.gateway']);
    expect(await fieldOf({ ...base, network: { bridge: 'vmbr0', vlan: 4095, ip: '10.0.0.1/33' } })).toEqual(['network.vlan', 'network.ip']);
    expect(await fieldOf({ ...base, ci_user: 'Root' })).toEqual(['ci_user']);
    expect(await fieldOf({ ...base, storage: 'bad storage' })).toEqual(['storage']);
    expect(await fieldOf({ ...base, new_vmid: 99 })).toEqual(['new_vmid']);
    expect(await fieldOf({ ...base, server_key_ids: [999_999] })).toEqual(['server_key_ids[0]']);
    expect(await fieldOf({ ...base, cloud_config_id: 999_999 })).toEqual(['cloud_config_id']);
    expect(await fieldOf({ ...base, source_vmid: 4242 })).toEqual(['source_vmid']);
    expect(await fieldOf({ new_vmid: 310, name: 'x' })).toEqual(['source_vmid']);
    expect(await fieldOf({ ...base, source_volume: 'local:vztmpl/a.tar.zst' })).toEqual(['source_volume']);
    expect(await fieldOf({ ...base, storage: 'local-lvm' })).toEqual(['storage']);
    expect(await fieldOf({ ...base, source_vmid: 9100, ci_user: 'debian' })).toEqual(['ci_user']);
    expect(await fieldOf({ new_vmid: 310, name: 'x', source_volume: 'local:vztmpl/a.tar.zst', disk_gb: 8 })).toEqual(['storage']);
    expect((await operator.post(`/api/hosts/${host.id}/deploy`, [])).status).toBe(400);

    expect((await operator.post('/api/hosts/999999/deploy', base)).status).toBe(404);
    for (const vmid of [110, 111, 302]) {
      const res = await operator.post(`/api/hosts/${host.id}/deploy`, { ...base, new_vmid: vmid });
      expect([res.status, res.body]).toEqual([409, { error: 'vmid already exists' }]);
    }
    expect((await viewer.post(`/api/hosts/${host.id}/deploy`, base)).status).toBe(403);
    expect((await anonymous.post(`/api/hosts/${host.id}/deploy`, base)).status).toBe(401);
    expect(other.id).not.toBe(host.id);
  });

  it('refuses a host that is offline', async () => {
    const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: 'silent' });
    const enrolled = await anonymous.post('/api/agent/enroll', { hostname: 'pve-silent', machine_id: 'deploy-silent', agent_version: '1.0.0' }, bearer(enrollment.body.token));
    const res = await operator.post(`/api/hosts/${enrolled.body.host_id}/deploy`, { source_vmid: 9000, new_vmid: 320, name: 'x' });
    expect([res.status, res.body]).toEqual([409, { error: 'host is offline' }]);
  });
});

describe('a launch cannot save keys', () => {
  const key = ed25519Line('smuggled@laptop');
  const blob = key.split(' ')[1]!;
  const shapes: [string, (base: Record<string, unknown>) => Record<string, unknown>][] = [
    ['a top-level ssh_keys', (base) => ({ ...base, ssh_keys: [key] })],
    ['a top-level sshkeys string', (base) => ({ ...base, sshkeys: key })],
    ['a nested authorized_keys', (base) => ({ ...base, network: { bridge: 'vmbr0', ip: 'dhcp', authorized_keys: 'x' } })],
    ['a public_key deep in a list', (base) => ({ ...base, extra: [{ deeper: [{ Public_Key: 'anything' }] }] })],
    ['ssh_public_keys, empty', (base) => ({ ...base, ssh_public_keys: [] })],
    ['a key line as a string', (base) => ({ ...base, tags: [key] })],
    ['a key inside a longer string', (base) => ({ ...base, note: `please add ${key} for me` })],
    ['a key inside a JSON string', (base) => ({ ...base, user_data: JSON.stringify({ users: [{ keys: [key] }] }) })],
    ['a key inside a cloud config', (base) => ({ ...base, cloud_config: `#cloud-config\nusers:\n  - name: debian\n    ssh_authorized_keys:\n      - ${key}\n` })],
  ];

  it.each(shapes)('refuses %s from an operator and an administrator, storing, queueing and logging nothing', async (_shape, make) => {
    const host = await enrolledHost([{ vmid: 330, name: 'rebuild-me', type: 'qemu', status: 'running' }]);
    const before = footprint();
    for (const client of [operator, admin]) {
      const deploy = await client.post(`/api/hosts/${host.id}/deploy`, make({ source_vmid: 9000, new_vmid: 331, name: 'smuggler' }));
      expect([deploy.status, deploy.body]).toEqual([400, KEY_ERROR]);
      const rebuild = await client.post(`/api/hosts/${host.id}/guests/330/actions`, make({ action: 'rebuild', source_vmid: 9000 }));
      expect([rebuild.status, rebuild.body]).toEqual([400, KEY_ERROR]);
    }
    const after = footprint();
    expect(after.counts).toEqual(before.counts);
    expect(after.written).not.toContain(blob);
    expect(await poll(host)).toEqual([]);
  });

  it('lets through words that only look like a key type', async () => {
    const host = await enrolledHost();
    const res = await operator.post(`/api/hosts/${host.id}/deploy`, { source_vmid: 9000, new_vmid: 332, name: 'ssh-rsa', tags: ['ssh-rsa'], note: 'ssh-ed25519 AAAAnot-a-key' });
    expect(res.status, res.text).toBe(202);
  });
});

describe('rebuild', () => {
  it('re-creates the guest from its spec under the same vmid, keeping the instance and its history', async () => {
    const host = await enrolledHost();
    const key = await saveKey('rebuild-key');
    await deployed(host, `pve-deploy${serial}`, 340, { server_key_ids: [key.id], cores: 4 });
    const res = await operator.post(`/api/hosts/${host.id}/guests/340/actions`, { action: 'rebuild', reason: 'fresh start' });
    expect(res.status, res.text).toBe(202);
    expect((await viewer.get(`/api/operations/${res.body.operation_id}`)).body).toMatchObject({ type: 'deploy', action: 'rebuild', vmid: 340, reason: 'fresh start' });
    const again = await operator.post(`/api/hosts/${host.id}/guests/340/actions`, { action: 'rebuild' });
    expect([again.status, again.body]).toEqual([409, { error: 'an operation is already pending for this guest' }]);
    const [command] = await poll(host);
    expect(command).toMatchObject({ type: 'deploy', new_vmid: 340, rebuild: true, source: { kind: 'qemu', vmid: 9000 }, name: 'app-340', cores: 4, ssh_keys: [key.line] });
    expect((await result(host, res.body.operation_id, 0)).status).toBe(204);
    const history = (await viewer.get('/api/instances/340/history')).body as { field: string; new_value: string | null }[];
    expect(history.filter((h) => h.field === 'rebuilt')).toEqual([expect.objectContaining({ new_value: 'qemu 9000' })]);
    expect(history.filter((h) => h.field === 'created')).toHaveLength(1);
    expect((await viewer.get('/api/instances/340')).body).toMatchObject({ vmid: 340, state: 'testing' });
  });

  it('needs an administrator’s force for a production instance', async () => {
    const host = await enrolledHost();
    await deployed(host, `pve-deploy${serial}`, 341);
    expect((await operator.put('/api/instances/341', { stack: 'production' })).status).toBe(200);
    const refused = await operator.post(`/api/hosts/${host.id}/guests/341/actions`, { action: 'rebuild' });
    expect([refused.status, refused.body]).toEqual([409, { error: "rebuilding a production instance needs an administrator's force" }]);
    expect((await operator.post(`/api/hosts/${host.id}/guests/341/actions`, { action: 'rebuild', force: true })).status).toBe(403);
    expect((await admin.post(`/api/hosts/${host.id}/guests/341/actions`, { action: 'rebuild' })).status).toBe(409);
    expect((await admin.post(`/api/hosts/${host.id}/guests/341/actions`, { action: 'rebuild', force: true })).status).toBe(202);
  });

  it('refuses a deleted server key or cloud config, naming it; a guest without a spec needs a source', async () => {
    const handmade = { vmid: 343, name: 'handmade', type: 'qemu', status: 'running' };
    const host = await enrolledHost([handmade]);
    const key = await saveKey('soon-gone');
    await deployed(host, `pve-deploy${serial}`, 342, { server_key_ids: [key.id] }, [handmade]);
    expect((await admin.delete(`/api/server-keys/${key.id}`)).status).toBe(204);
    const res = await operator.post(`/api/hosts/${host.id}/guests/342/actions`, { action: 'rebuild' });
    expect(res.status).toBe(409);
    expect(res.body.error).toContain(`server key “soon-gone” (id ${key.id}) was deleted`);

    const bare = await operator.post(`/api/hosts/${host.id}/guests/343/actions`, { action: 'rebuild' });
    expect([bare.status, bare.body.errors?.[0]?.field]).toEqual([400, 'source_vmid']);
    const sourced = await operator.post(`/api/hosts/${host.id}/guests/343/actions`, { action: 'rebuild', source_vmid: 9000, cores: 2 });
    expect(sourced.status, sourced.text).toBe(202);
    const template = await operator.post(`/api/hosts/${host.id}/guests/9000/actions`, { action: 'rebuild', source_vmid: 9000 });
    expect([template.status, template.body]).toEqual([409, { error: 'guest is a template' }]);
  });
});

describe('parallel requests', () => {
  it('10 parallel deploys onto one new vmid make one operation', async () => {
    const host = await enrolledHost();
    const answers = await heldPosts(server.local, `/api/hosts/${host.id}/deploy`, bearer(operatorToken), Array.from({ length: 10 }, (_, i) => ({ source_vmid: 9000, new_vmid: 350, name: `race-${i}` })));
    expect(answers.map((a) => a.status).sort()).toEqual([202, ...Array(9).fill(409)]);
    const ops = (await viewer.get(`/api/operations?host_id=${host.id}&vmid=350`)).body;
    expect(ops).toHaveLength(1);
    expect((await viewer.get('/api/instances/350')).body.name).toBe(ops[0].params.name);
  });

  it('a key deleted while a rebuild that needs it is queued fails the rebuild, naming the key, and nothing is sent', async () => {
    const host = await enrolledHost();
    const key = await saveKey('deleted-under-rebuild');
    await deployed(host, `pve-deploy${serial}`, 351, { server_key_ids: [key.id] });
    const res = await operator.post(`/api/hosts/${host.id}/guests/351/actions`, { action: 'rebuild' });
    expect(res.status, res.text).toBe(202);
    expect((await admin.delete(`/api/server-keys/${key.id}`)).status).toBe(204);
    expect(await poll(host)).toEqual([]);
    const op = (await admin.get(`/api/operations/${res.body.operation_id}`)).body;
    expect(op).toMatchObject({ status: 'failed', sent_at: null });
    expect(op.output).toContain(`server key “deleted-under-rebuild” (id ${key.id}) was deleted`);
    expect((await viewer.get('/api/instances/351')).status).toBe(200);
  });

});

describe('the largest launch bodies', () => {
  // One retry: a bound on wall time, which a loaded CI machine's scheduling alone can overrun once (test/README.md).
  it('answers 1 MiB bodies built to make the key search work hard while /api/health keeps answering', { retry: 1, timeout: 60_000 }, async () => {
    const host = await enrolledHost();
    const fake = 'ssh-ed25519 AAAA' + 'A'.repeat(60) + ' ';
    const bodies = [
      { source_vmid: 9000, new_vmid: 360, name: 'Big', note: fake.repeat(Math.floor(1_000_000 / fake.length)) },
      { source_vmid: 9000, new_vmid: 360, name: 'Big', tags: Array.from({ length: 100_000 }, (_, i) => `t${i}`) },
      { source_vmid: 9000, new_vmid: 360, name: 'Big', extra: Array.from({ length: 55_000 }, () => 'AAAAAAAAAAAAAAAA') },
      { source_vmid: 9000, new_vmid: 360, name: 'Big', deep: JSON.parse('['.repeat(4000) + ']'.repeat(4000)) },
      { source_vmid: 9000, new_vmid: 360, name: 'Big', note: 'ssh-ed25519 ' + 'A'.repeat(1_000_000) },
    ];
    const polled = await whileHealthPolled(anonymous, async () => {
      for (const body of bodies) {
        const answers = await Promise.all(Array.from({ length: 2 }, () => operator.post(`/api/hosts/${host.id}/deploy`, body)));
        for (const a of answers) expect(a.status, a.text.slice(0, 200)).toBe(400);
      }
    });
    expect(polled.slowest, healthTimes(polled, 'the launch bodies')).toBeLessThan(1000);
  });
});
