// Host storage, downloads onto hosts, pushes of cached files and the agent's fetch of them (PRODUCT.md
// "Host storage, downloads and the file cache") through the BUILT server (dist/server/main.js in its
// own process) over real HTTP on 127.0.0.1, with a real SQLite file and hosts that speak the agent's
// side of the wire by hand: every route, status and role, the exact commands the agent receives,
// parallel pushes, Range resumes, and the largest bodies while /api/health is polled.
//
// Pushes and fetches need a cached file, put there through POST /api/files (the file cache, s39-files):
// those tests skip themselves, saying so, while the server serves no such route.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { bearer, heldPosts } from './helpers/hosts.js';
import { TestClient } from './helpers/http.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';
import { healthTimes, whileHealthPolled } from './helpers/health-poll.js';

const SETUP_TOKEN = 'storage-test-setup-token-0123456789ab';

let server: Headless;
let dbPath: string;
let admin: TestClient;
let adminToken: string;
let operator: TestClient;
let viewer: TestClient;
let anonymous: TestClient;
let serial = 0;

interface Host {
  id: number;
  hostname: string;
  token: string;
  agent: TestClient;
}

const LOCAL = { storage: 'local', type: 'dir', content: ['iso', 'vztmpl', 'backup', 'snippets', 'import'], avail: 52_000_000_000, total: 100_000_000_000, active: true, shared: false };
const LVM = { storage: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'], avail: 400_000_000_000, total: 500_000_000_000, active: true, shared: false };
const NFS = { storage: 'nas-iso', type: 'nfs', content: ['iso'], avail: null, total: null, active: false, shared: true };

async function tokenFor(role: 'viewer' | 'operator' | 'administrator'): Promise<string> {
  const res = await admin.post('/api/tokens', { name: `${role} storage script`, role });
  expect(res.status, res.text).toBe(201);
  return res.body.token as string;
}

/** A host enrolled through the API that has just beaten with `storages`. */
async function enrolledHost(storages: object[] | undefined = [LOCAL, LVM, NFS]): Promise<Host> {
  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: `storage ${++serial}` });
  expect(enrollment.status, enrollment.text).toBe(201);
  const hostname = `pve-storage${serial}`;
  const enrolled = await anonymous.post('/api/agent/enroll', { hostname, machine_id: `storage-machine-${serial}`, agent_version: '1.0.0' }, bearer(enrollment.body.token));
  expect(enrolled.status, enrolled.text).toBe(201);
  const host = { id: enrolled.body.host_id as number, hostname, token: enrolled.body.host_token as string, agent: new TestClient(server.local, bearer(enrolled.body.host_token)) };
  expect((await beat(host, storages === undefined ? {} : { storages })).status).toBe(200);
  return host;
}

function beat(host: Host, extra: object) {
  return host.agent.post('/api/agent/heartbeat', {
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: host.hostname,
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: [],
    ...extra,
  });
}

/** What the agent's command poll hands out now. */
async function poll(host: Host): Promise<any[]> {
  const res = await host.agent.get('/api/agent/commands?wait=0');
  expect([200, 204], res.text).toContain(res.status);
  return res.status === 200 ? res.body.commands : [];
}

const result = (host: Host, id: string, exit_code: number, output = '') => host.agent.post(`/api/agent/operations/${id}/result`, { exit_code, output });

const volume = (storage: string, name: string, size = 1000) => ({ volid: `${storage}:${name}`, format: name.endsWith('.iso') ? 'iso' : 'tzst', size, ctime: 1_732_000_000 });

/** A file put into the cache through POST /api/files, as the dashboard uploads it. */
async function cached(bytes: Buffer, name: string): Promise<{ id: number; name: string; size: number; sha256: string }> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), name);
  const res = await fetch(`${server.local}/api/files`, { method: 'POST', body: form, headers: { cookie: admin.cookieHeader(), origin: server.local } });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return JSON.parse(text);
}

/** A GET of the agent's file route through node:http, the body as bytes. */
function fetchFile(host: Host, fileId: number, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.local}/api/agent/files/${fileId}`, { headers: { ...bearer(host.token), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function query<T>(sql: string, ...params: unknown[]): T[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
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
  adminToken = await tokenFor('administrator');
  operator = new TestClient(server.local, bearer(await tokenFor('operator')));
  viewer = new TestClient(server.local, bearer(await tokenFor('viewer')));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

describe('storages from heartbeats and volumes from agents', () => {
  it('keeps the storages a heartbeat lists and answers them with their volumes to every role that reads hosts', async () => {
    const host = await enrolledHost();
    const expected = [
      { ...LOCAL, volumes: [], volumes_at: null },
      { ...LVM, volumes: [], volumes_at: null },
      { ...NFS, volumes: [], volumes_at: null },
    ];
    for (const reader of [viewer, operator, admin]) {
      const res = await reader.get(`/api/hosts/${host.id}/storage`);
      expect([res.status, res.body]).toEqual([200, expected]);
    }
    expect((await anonymous.get(`/api/hosts/${host.id}/storage`)).status).toBe(401);
    expect((await host.agent.get(`/api/hosts/${host.id}/storage`)).status).toBe(401);
    expect([(await viewer.get('/api/hosts/999999/storage')).status, (await viewer.get('/api/hosts/x/storage')).status]).toEqual([404, 400]);
  });

  it('takes the volumes an agent sends for a listed storage, replacing what it sent before', async () => {
    const host = await enrolledHost();
    const first = [volume('local', 'iso/debian-12.7.0-amd64-netinst.iso', 661_651_456), volume('local', 'vztmpl/debian-12-standard_12.7-1_amd64.tar.zst', 126_000_000)];
    expect((await host.agent.post('/api/agent/storage', { storage: 'local', volumes: first })).status).toBe(204);
    let local = (await viewer.get(`/api/hosts/${host.id}/storage`)).body[0];
    expect(local.volumes).toEqual(first);
    expect(local.volumes_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);

    const second = [{ volid: 'local:snippets/user-data.yaml', format: 'snippet', size: 120 }];
    expect((await host.agent.post('/api/agent/storage', { storage: 'local', volumes: second })).status).toBe(204);
    local = (await viewer.get(`/api/hosts/${host.id}/storage`)).body[0];
    expect(local.volumes).toEqual([{ ...second[0], ctime: null }]);
    // The same volume id twice is one volume (the last one sent).
    const twice = [volume('local', 'iso/a.iso', 1), volume('local', 'iso/a.iso', 2)];
    expect((await host.agent.post('/api/agent/storage', { storage: 'local', volumes: twice })).status).toBe(204);
    expect((await viewer.get(`/api/hosts/${host.id}/storage`)).body[0].volumes).toEqual([twice[1]]);
  });

  it('refuses volumes of a storage the last heartbeat did not list (409 naming it) and bad volumes (400 naming the field)', async () => {
    const host = await enrolledHost();
    const unknown = await host.agent.post('/api/agent/storage', { storage: 'ceph-pool', volumes: [] });
    expect([unknown.status, unknown.body]).toEqual([409, { error: `storage ceph-pool is not one this host's last heartbeat listed` }]);
    const fields = async (body: unknown) => {
      const res = await host.agent.post('/api/agent/storage', body);
      expect(res.status, res.text).toBe(400);
      return res.body.errors.map((e: { field: string }) => e.field);
    };
    expect(await fields({ storage: 'local', volumes: [volume('nas-iso', 'iso/x.iso')] })).toEqual(['volumes.0.volid']);
    expect(await fields({ storage: 'local', volumes: [{ ...volume('local', 'iso/x.iso'), size: -1 }] })).toEqual(['volumes.0.size']);
    expect(await fields({ storage: 'local', volumes: [{ ...volume('local', 'iso/x.iso'), volid: 'local:../../etc/passwd x' }] })).toEqual(['volumes.0.volid']);
    expect(await fields({ storage: '../etc', volumes: [] })).toEqual(['storage']);
    expect(await fields({ storage: 'local', volumes: Array.from({ length: 10_001 }, (_, i) => volume('local', `iso/${i}.iso`)) })).toEqual(['volumes']);
    expect((await host.agent.post('/api/agent/storage', [])).status).toBe(400);
    // Only a host token: a person's session or token, or no token, is refused like any bad agent credential.
    for (const client of [admin, new TestClient(server.local, bearer(adminToken)), anonymous]) {
      const res = await client.post('/api/agent/storage', { storage: 'local', volumes: [] });
      expect([res.status, res.body]).toEqual([401, { error: 'invalid token' }]);
    }
    expect((await viewer.get(`/api/hosts/${host.id}/storage`)).body.every((s: { volumes: unknown[] }) => s.volumes.length === 0)).toBe(true);
  });

  it('an older agent’s heartbeat without storages leaves them; a storage the heartbeat no longer lists goes with its volumes', async () => {
    const host = await enrolledHost();
    expect((await host.agent.post('/api/agent/storage', { storage: 'local', volumes: [volume('local', 'iso/keep.iso')] })).status).toBe(204);
    expect((await beat(host, {})).status).toBe(200);
    expect((await viewer.get(`/api/hosts/${host.id}/storage`)).body.map((s: { storage: string }) => s.storage)).toEqual(['local', 'local-lvm', 'nas-iso']);

    // A storage's facts change with each heartbeat; its volumes stay.
    expect((await beat(host, { storages: [{ ...LOCAL, avail: 1 }, LVM], storage_sha256: 'a'.repeat(64) })).status).toBe(200);
    let storages = (await viewer.get(`/api/hosts/${host.id}/storage`)).body;
    expect(storages.map((s: { storage: string; avail: number }) => [s.storage, s.avail])).toEqual([['local', 1], ['local-lvm', LVM.avail]]);
    expect(storages[0].volumes).toEqual([volume('local', 'iso/keep.iso')]);
    expect(query('SELECT storage_sha256 FROM hosts WHERE id = ?', host.id)).toEqual([{ storage_sha256: 'a'.repeat(64) }]);

    expect((await beat(host, { storages: [LVM] })).status).toBe(200);
    expect((await beat(host, { storages: [LOCAL, LVM] })).status).toBe(200);
    storages = (await viewer.get(`/api/hosts/${host.id}/storage`)).body;
    expect(storages[0]).toEqual({ ...LOCAL, volumes: [], volumes_at: null });
    expect(query("SELECT volumes FROM host_storages WHERE host_id = ? AND storage = 'local'", host.id)).toEqual([{ volumes: '[]' }]);
    expect(query('SELECT storage_sha256 FROM hosts WHERE id = ?', host.id)).toEqual([{ storage_sha256: 'a'.repeat(64) }]);
  });

  it('answers a heartbeat with bad storages 400 naming each field, and stores nothing of it', async () => {
    const host = await enrolledHost();
    const fields = async (extra: object) => {
      const res = await beat(host, extra);
      expect(res.status, res.text).toBe(400);
      return res.body.errors.map((e: { field: string }) => e.field);
    };
    expect(await fields({ storages: [{ ...LOCAL, storage: 'bad storage' }, { ...LVM, content: 'images,rootdir' }] })).toEqual(['storages.0.storage', 'storages.1.content']);
    expect(await fields({ storages: [{ ...LOCAL, active: 1 }] })).toEqual(['storages.0.active']);
    expect(await fields({ storages: Array.from({ length: 101 }, (_, i) => ({ ...LVM, storage: `s${i}` })) })).toEqual(['storages']);
    expect(await fields({ storage_sha256: 'not-a-hash' })).toEqual(['storage_sha256']);
    expect((await viewer.get(`/api/hosts/${host.id}/storage`)).body.map((s: { storage: string }) => s.storage)).toEqual(['local', 'local-lvm', 'nas-iso']);
  });
});

describe('POST /api/hosts/:id/storage/:storage/downloads', () => {
  const body = {
    url: 'https://cdimage.debian.org/debian-cd/current/amd64/iso-cd/debian-12.7.0-amd64-netinst.iso',
    filename: 'debian-12.7.0-amd64-netinst.iso',
    content: 'iso',
    checksum: 'ab'.repeat(64),
    checksum_algorithm: 'sha512',
  };

  it('queues a download whose command carries exactly the given values, with an audit entry, until the agent reports it', async () => {
    const host = await enrolledHost();
    const res = await admin.post(`/api/hosts/${host.id}/storage/local/downloads`, body);
    expect([res.status, res.body]).toEqual([202, { operation_id: expect.any(String), status: 'pending' }]);
    const id = res.body.operation_id as string;
    expect(await poll(host)).toEqual([{ type: 'download', operation_id: id, storage: 'local', ...body }]);
    const op = (await admin.get(`/api/operations/${id}`)).body;
    expect(op).toMatchObject({ type: 'download', host_id: host.id, vmid: null, action: null, status: 'sent', params: { storage: 'local', ...body }, requested_by: 'root' });
    const entry = (await admin.get('/api/audit')).body.find((e: { action: string }) => e.action === 'host.storage_download');
    expect(entry).toMatchObject({ actor: 'root', detail: { host: host.hostname, operation_id: id, storage: 'local', ...body } });
    expect((await result(host, id, 0, 'downloaded\n')).status).toBe(204);
    expect((await admin.get(`/api/operations/${id}`)).body.status).toBe('succeeded');

    // Without a checksum the command has none; a template goes where vztmpl is held.
    const plain = { url: 'http://download.proxmox.com/images/system/debian-12-standard_12.7-1_amd64.tar.zst', filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' };
    const second = await new TestClient(server.local, bearer(adminToken)).post(`/api/hosts/${host.id}/storage/local/downloads`, plain);
    expect(second.status, second.text).toBe(202);
    // A heartbeat's answer carries it as well as a poll would.
    const answer = await beat(host, {});
    expect(answer.body.commands).toEqual([{ type: 'download', operation_id: second.body.operation_id, storage: 'local', ...plain }]);
    // Called off by whom may ask for it: an operator cannot cancel an administrator's download.
    const third = await admin.post(`/api/hosts/${host.id}/storage/local/downloads`, plain);
    expect((await operator.delete(`/api/operations/${third.body.operation_id}`)).status).toBe(403);
    expect((await admin.delete(`/api/operations/${third.body.operation_id}`)).status).toBe(204);
  });

  it('refuses a URL with a user name or password (400 naming url), and keeps nothing of it anywhere', async () => {
    const host = await enrolledHost();
    const before = query<{ n: number }>('SELECT count(*) AS n FROM operations')[0]!.n;
    for (const url of ['https://mirror-user:S3cretPassw0rd@mirror.example/debian.iso', 'https://S3cretPassw0rd@mirror.example/debian.iso', 'http://:S3cretPassw0rd@mirror.example/d.iso']) {
      const res = await admin.post(`/api/hosts/${host.id}/storage/local/downloads`, { ...body, url });
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['url']);
      expect(res.text).not.toContain('S3cretPassw0rd');
    }
    expect(query<{ n: number }>('SELECT count(*) AS n FROM operations')[0]!.n).toBe(before);
    const written = JSON.stringify(server.log()) + JSON.stringify(query('SELECT * FROM audit_log')) + JSON.stringify(query('SELECT * FROM operations'));
    expect(written).not.toContain('S3cretPassw0rd');
  });

  it('answers each refusal with its status', async () => {
    const host = await enrolledHost();
    const at = (storage: string, b: object = body, client = admin) => client.post(`/api/hosts/${host.id}/storage/${storage}/downloads`, b);
    const fields = async (b: object) => {
      const res = await at('local', b);
      expect(res.status, res.text).toBe(400);
      return res.body.errors.map((e: { field: string }) => e.field);
    };
    expect(await fields({ ...body, url: 'ftp://mirror.example/a.iso' })).toEqual(['url']);
    expect(await fields({ ...body, url: 'file:///etc/passwd' })).toEqual(['url']);
    expect(await fields({ ...body, filename: '../../etc/cron.d/x' })).toEqual(['filename']);
    expect(await fields({ ...body, filename: '.hidden.iso' })).toEqual(['filename']);
    expect(await fields({ ...body, content: 'snippets' })).toEqual(['content']);
    expect(await fields({ ...body, checksum_algorithm: 'sha256' })).toEqual(['checksum']);
    expect(await fields({ ...body, checksum: 'ab'.repeat(32), checksum_algorithm: undefined })).toEqual(['checksum_algorithm']);
    expect((await at('bad storage!', body)).status).toBe(400);
    expect((await at('local', [])).status).toBe(400);

    expect((await admin.post('/api/hosts/999999/storage/local/downloads', body)).status).toBe(404);
    expect((await at('ceph')).body).toEqual({ error: `storage ceph is not one ${host.hostname} listed in its last heartbeat` });
    expect([(await at('local-lvm')).status, (await at('local-lvm')).body]).toEqual([409, { error: 'storage local-lvm does not hold iso' }]);
    expect((await at('nas-iso')).body).toEqual({ error: `storage nas-iso is not active on ${host.hostname}` });

    // hosts.manage: administrators only; a browser session also needs its Origin.
    expect((await at('local', body, viewer)).status).toBe(403);
    expect((await at('local', body, operator)).status).toBe(403);
    expect((await at('local', body, anonymous)).status).toBe(401);
    expect((await at('local', body, host.agent)).status).toBe(401);
    expect((await admin.post(`/api/hosts/${host.id}/storage/local/downloads`, body, { origin: '' })).status).toBe(403);
    expect((await admin.post(`/api/hosts/${host.id}/storage/local/downloads`, body, { origin: 'http://evil.example' })).status).toBe(403);
    expect(await poll(host)).toEqual([]);
  });

  it('refuses a host that is offline', async () => {
    const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: 'silent storage' });
    const enrolled = await anonymous.post('/api/agent/enroll', { hostname: 'pve-silent', machine_id: 'storage-silent', agent_version: '1.0.0' }, bearer(enrollment.body.token));
    const res = await admin.post(`/api/hosts/${enrolled.body.host_id}/storage/local/downloads`, body);
    expect([res.status, res.body]).toEqual([409, { error: 'host is offline' }]);
  });
});

describe('pushes of cached files and the agent’s fetch', () => {
  const ISO = Buffer.alloc(3 * 1024 * 1024 + 17, 0);
  for (let i = 0; i < ISO.length; i++) ISO[i] = (i * 7 + (i >> 9)) & 0xff;

  it('queues a push whose command names the cached file, and lets only that host fetch it while the push runs', async () => {
    const [host, other] = [await enrolledHost(), await enrolledHost()];
    const file = await cached(ISO, 'homefleet-test.iso');
    const notPushed = await cached(Buffer.from('never pushed'), 'never.iso');
    // No push yet: the same answer as a bad token, for a file that exists or not.
    for (const id of [file.id, notPushed.id, 999_999]) {
      const res = await fetchFile(host, id);
      expect([res.status, JSON.parse(res.body.toString())]).toEqual([401, { error: 'invalid token' }]);
    }

    const res = await admin.post(`/api/hosts/${host.id}/storage/local/files`, { file_id: file.id, content: 'iso' });
    expect([res.status, res.body]).toEqual([202, { operation_id: expect.any(String), status: 'pending' }]);
    const id = res.body.operation_id as string;
    expect(await poll(host)).toEqual([
      { type: 'upload', operation_id: id, file_id: file.id, name: 'homefleet-test.iso', size: ISO.length, sha256: sha256(ISO), storage: 'local', content: 'iso', replace: false },
    ]);
    const entry = (await admin.get('/api/audit')).body.find((e: { action: string }) => e.action === 'host.storage_push');
    expect(entry).toMatchObject({ detail: { host: host.hostname, operation_id: id, file_id: file.id, name: 'homefleet-test.iso', storage: 'local', content: 'iso', replace: false } });

    const whole = await fetchFile(host, file.id);
    expect(whole.status).toBe(200);
    expect(whole.headers).toMatchObject({ 'content-length': String(ISO.length), etag: `"${sha256(ISO)}"`, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' });
    expect(sha256(whole.body)).toBe(sha256(ISO));

    // A fetch cut off at half-way resumes with only the rest.
    const half = Math.floor(ISO.length / 2);
    const rest = await fetchFile(host, file.id, { range: `bytes=${half}-` });
    expect([rest.status, rest.headers['content-range'], rest.headers['content-length']]).toEqual([206, `bytes ${half}-${ISO.length - 1}/${ISO.length}`, String(ISO.length - half)]);
    expect(sha256(Buffer.concat([ISO.subarray(0, half), rest.body]))).toBe(sha256(ISO));
    const slice = await fetchFile(host, file.id, { range: 'bytes=100-199' });
    expect([slice.status, slice.body.equals(ISO.subarray(100, 200))]).toEqual([206, true]);
    const beyond = await fetchFile(host, file.id, { range: `bytes=${ISO.length}-` });
    expect([beyond.status, beyond.headers['content-range']]).toEqual([416, `bytes */${ISO.length}`]);

    // Another host, or this one once the push has ended, is refused.
    expect((await fetchFile(other, file.id)).status).toBe(401);
    expect((await fetchFile(host, notPushed.id)).status).toBe(401);
    expect((await result(host, id, 0, 'homefleet-test.iso in place\n')).status).toBe(204);
    expect((await fetchFile(host, file.id)).status).toBe(401);
  });

  it('makes one operation of ten parallel pushes of one file to one storage; another storage or host is another push', async () => {
    const [host, other] = [await enrolledHost([LOCAL, LVM, { ...NFS, active: true }]), await enrolledHost()];
    const file = await cached(Buffer.from('#cloud-config\npackages: [nginx]\n'), 'web.yaml');
    const answers = await heldPosts(server.local, `/api/hosts/${host.id}/storage/local/files`, bearer(adminToken), Array.from({ length: 10 }, () => ({ file_id: file.id, content: 'snippets' })));
    expect(answers.map((a) => a.status).sort()).toEqual([202, ...Array(9).fill(409)]);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.error === 'a push of this file to this storage is already running')).toBe(true);
    expect((await admin.get(`/api/operations?host_id=${host.id}`)).body.filter((op: { type: string }) => op.type === 'upload')).toHaveLength(1);

    expect((await admin.post(`/api/hosts/${host.id}/storage/nas-iso/files`, { file_id: file.id, content: 'iso' })).status).toBe(202);
    expect((await admin.post(`/api/hosts/${other.id}/storage/local/files`, { file_id: file.id, content: 'snippets', replace: true })).status).toBe(202);
    // Once the push ended, the file may be pushed there again.
    const [command] = (await poll(host)).filter((c) => c.storage === 'local');
    expect((await result(host, command.operation_id, 1, 'exists\n')).status).toBe(204);
    expect((await admin.post(`/api/hosts/${host.id}/storage/local/files`, { file_id: file.id, content: 'snippets', replace: true })).status).toBe(202);
  });

  it('answers each refusal of a push with its status, and keeps a pushed file from being deleted until the push ends', async () => {
    const host = await enrolledHost();
    const file = await cached(Buffer.from('template bytes'), 'debian-12-standard_12.7-1_amd64.tar.zst');
    const push = (storage: string, b: object, client = admin) => client.post(`/api/hosts/${host.id}/storage/${storage}/files`, b);
    const ok = { file_id: file.id, content: 'vztmpl' };
    const unknown = await push('local', { file_id: 999_999, content: 'iso' });
    expect([unknown.status, unknown.body.errors.map((e: { field: string }) => e.field)]).toEqual([400, ['file_id']]);
    expect((await push('local', { ...ok, content: 'images' })).status).toBe(400);
    expect((await push('local', { ...ok, replace: 'yes' })).status).toBe(400);
    expect((await admin.post(`/api/hosts/999999/storage/local/files`, ok)).status).toBe(404);
    expect((await push('ceph', ok)).status).toBe(409);
    expect([(await push('local-lvm', ok)).status, (await push('local-lvm', ok)).body]).toEqual([409, { error: 'storage local-lvm does not hold vztmpl' }]);
    expect((await push('local', ok, viewer)).status).toBe(403);
    expect((await push('local', ok, operator)).status).toBe(403);
    expect((await push('local', ok, anonymous)).status).toBe(401);
    expect((await admin.post(`/api/hosts/${host.id}/storage/local/files`, ok, { origin: '' })).status).toBe(403);

    const res = await push('local', ok);
    expect(res.status, res.text).toBe(202);
    expect((await admin.delete(`/api/files/${file.id}`)).status).toBe(409);
    expect((await admin.delete(`/api/operations/${res.body.operation_id}`)).status).toBe(204);
    expect((await admin.delete(`/api/files/${file.id}`)).status).toBe(204);
  });
});

describe('the largest bodies', () => {
  // One retry: a bound on wall time, which a loaded CI machine's scheduling alone can overrun once (test/README.md).
  it('takes 100 storages in heartbeats and 10,000 volumes per report while /api/health keeps answering within 1 s', { retry: 1, timeout: 60_000 }, async () => {
    const hosts = [await enrolledHost(), await enrolledHost()];
    const storages = Array.from({ length: 100 }, (_, i) => ({ ...LOCAL, storage: `s${String(i).padStart(2, '0')}-${'x'.repeat(58)}`, type: 'd'.repeat(32), content: Array.from({ length: 16 }, () => 'snippetsnippetsn') }));
    const volumes = (storage: string) => Array.from({ length: 10_000 }, (_, i) => ({ volid: `${storage}:iso/${String(i).padStart(5, '0')}${'v'.repeat(290)}`, format: 'f'.repeat(32), size: Number.MAX_SAFE_INTEGER, ctime: 2 ** 40 }));
    // Made before /api/health is timed: serialising them is this process's work, not the server's.
    const reports = [0, 1].map((i) => JSON.stringify({ storage: storages[i]!.storage, volumes: volumes(storages[i]!.storage) }));
    expect(reports[0]!.length).toBeGreaterThan(4_500_000);
    const polled = await whileHealthPolled(anonymous, async () => {
      for (const host of hosts) expect((await beat(host, { storages })).status).toBe(200);
      for (let round = 0; round < 2; round++) {
        const answers = await Promise.all(hosts.flatMap((host) => reports.map((report) => host.agent.post('/api/agent/storage', report))));
        for (const a of answers) expect(a.status, a.text.slice(0, 200)).toBe(204);
      }
    });
    expect(polled.slowest, healthTimes(polled, 'the reports')).toBeLessThan(1000);
    const listed = (await viewer.get(`/api/hosts/${hosts[0]!.id}/storage`)).body;
    expect(listed).toHaveLength(100);
    expect(listed[0].volumes).toHaveLength(10_000);
  });
});
