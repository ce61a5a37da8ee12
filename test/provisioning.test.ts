// Server keys and cloud configs through the BUILT server (dist/server/main.js in its own process)
// over real HTTP on 127.0.0.1, with a real SQLite file: every route for each role, bad input, parallel
// duplicates, and that no private key or config body reaches the log or the audit table.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { TestClient } from './helpers/http.js';
import { ed25519Line, puttyPrivateKey, skEcdsaLine, skEd25519Line, sshKeygen } from './helpers/ssh-keys.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';
import { healthTimes, whileHealthPolled } from './helpers/health-poll.js';

const SETUP_TOKEN = 'provisioning-test-setup-token-0123456789';
const PRIVATE = { error: 'this is a private key: paste the public key (.pub)' };

let server: Headless;
let dbPath: string;
let admin: TestClient;
let operator: TestClient;
let viewer: TestClient;

async function tokenClient(role: 'viewer' | 'operator'): Promise<TestClient> {
  const res = await admin.post('/api/tokens', { name: `${role} script`, role });
  expect(res.status, res.text).toBe(201);
  return new TestClient(server.local, { authorization: `Bearer ${res.body.token}` });
}

/** Everything the server wrote down: its log output and every audit row. */
function everythingWritten(): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    return JSON.stringify(server.log()) + JSON.stringify(db.prepare('SELECT * FROM audit_log').all());
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await ensureBuilt();
  dbPath = tempDbPath();
  server = await startHeadless({ DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' }, { shared: true });
  admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  operator = await tokenClient('operator');
  viewer = await tokenClient('viewer');
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

describe('server keys', () => {
  it('saves a key with the fingerprint ssh-keygen -l prints, reads it, lists it for operators and deletes it', async () => {
    const made = sshKeygen(['-t', 'ed25519'], 'alice@laptop');
    const created = await admin.post('/api/server-keys', { name: 'Alice laptop', public_key: `${made.pub}\n` });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'Alice laptop',
      type: 'ssh-ed25519',
      bits: 256,
      fingerprint: made.listed.fingerprint,
      comment: 'alice@laptop',
      created_by: 'root',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    const { id } = created.body;
    expect((await admin.get(`/api/server-keys/${id}`)).body).toEqual(created.body);
    const choice = { id, name: 'Alice laptop', type: 'ssh-ed25519', fingerprint: made.listed.fingerprint };
    expect((await operator.get('/api/server-keys')).body).toContainEqual(choice);
    expect((await admin.get('/api/server-keys')).body).toContainEqual(choice);
    // The canonical line is stored; no answer carries it.
    const db = new Database(dbPath, { readonly: true });
    expect(db.prepare('SELECT public_key FROM server_keys WHERE id = ?').pluck().get(id)).toBe(made.pub);
    db.close();
    const audit = (await admin.get('/api/audit')).body.find((e: { action: string }) => e.action === 'server_key.create');
    expect(audit).toMatchObject({ subject: { type: 'server_key', id: String(id), name: 'Alice laptop' }, detail: { fingerprint: made.listed.fingerprint } });
    expect(everythingWritten()).not.toContain(made.pub.split(' ')[1]);

    expect((await admin.delete(`/api/server-keys/${id}`)).status).toBe(204);
    expect(await admin.get(`/api/server-keys/${id}`)).toMatchObject({ status: 404, body: { error: 'server key not found' } });
    expect(await admin.delete(`/api/server-keys/${id}`)).toMatchObject({ status: 404, body: { error: 'server key not found' } });
    expect((await operator.get('/api/server-keys')).body).not.toContainEqual(choice);
    // A deleted key's id is never handed out again: a deploy spec naming it finds nothing.
    const next = await admin.post('/api/server-keys', { name: 'next', public_key: ed25519Line() });
    expect(next.body.id).toBeGreaterThan(id);
  });

  it.each([
    ['ecdsa-sha2-nistp256', ['-t', 'ecdsa', '-b', '256'], 256],
    ['ecdsa-sha2-nistp384', ['-t', 'ecdsa', '-b', '384'], 384],
    ['ecdsa-sha2-nistp521', ['-t', 'ecdsa', '-b', '521'], 521],
    ['ssh-rsa', ['-t', 'rsa', '-b', '2048'], 2048],
  ])('takes %s', async (type, args, bits) => {
    const made = sshKeygen(args);
    const res = await admin.post('/api/server-keys', { name: type, public_key: made.pub });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ type, bits, fingerprint: made.listed.fingerprint });
  });

  it.each([
    ['sk-ssh-ed25519@openssh.com', skEd25519Line],
    ['sk-ecdsa-sha2-nistp256@openssh.com', skEcdsaLine],
  ])('takes %s', async (type, make) => {
    const res = await admin.post('/api/server-keys', { name: type, public_key: make() });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ type, bits: 256 });
  });

  it('refuses the same key material twice, whatever the name or comment, with 409', async () => {
    const pub = ed25519Line('first');
    expect((await admin.post('/api/server-keys', { name: 'one', public_key: pub })).status).toBe(201);
    const again = await admin.post('/api/server-keys', { name: 'two', public_key: pub.replace(/ first$/, ' other comment') });
    expect(again).toMatchObject({ status: 409, body: { error: 'server key already saved' } });
  });

  it('of 10 parallel saves of one key, saves one (201) and refuses nine (409)', async () => {
    const pub = ed25519Line();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => admin.post('/api/server-keys', { name: `parallel ${i}`, public_key: pub })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
    const db = new Database(dbPath, { readonly: true });
    expect(db.prepare("SELECT count(*) FROM server_keys WHERE name LIKE 'parallel %'").pluck().get()).toBe(1);
    expect(db.prepare("SELECT count(*) FROM audit_log WHERE action = 'server_key.create' AND subject_name LIKE 'parallel %'").pluck().get()).toBe(1);
    db.close();
  });

  it.each([
    ['OpenSSH', ['-t', 'ed25519']],
    ['PEM RSA', ['-t', 'rsa', '-b', '2048', '-m', 'PEM']],
    ['PEM EC', ['-t', 'ecdsa', '-m', 'PEM']],
    ['PKCS#8', ['-t', 'ed25519', '-m', 'PKCS8']],
    ['encrypted PKCS#8', ['-t', 'ecdsa', '-m', 'PKCS8', '-N', 'secret words']],
  ])('refuses a private key in %s form, and no byte of it is stored, logged or audited', async (_what, args) => {
    const made = sshKeygen(args);
    const before = (await admin.get('/api/server-keys')).body.length;
    const res = await admin.post('/api/server-keys', { name: 'oops', public_key: made.private });
    expect(res).toMatchObject({ status: 400, body: PRIVATE });
    expect((await admin.get('/api/server-keys')).body).toHaveLength(before);
    const secretLines = made.private.split('\n').filter((l) => l && !l.startsWith('-----') && !/:/.test(l));
    expect(secretLines.length).toBeGreaterThan(0);
    const written = everythingWritten();
    for (const line of secretLines) expect(written).not.toContain(line);
    expect(res.text).not.toContain(secretLines[0]);
  });

  it('refuses a PuTTY private key the same way', async () => {
    const ppk = puttyPrivateKey();
    expect(await admin.post('/api/server-keys', { name: 'ppk', public_key: ppk })).toMatchObject({ status: 400, body: PRIVATE });
    expect(everythingWritten()).not.toContain(ppk.split('\n')[7]);
  });

  it.each([
    ['a 1024-bit RSA key', () => sshKeygen(['-t', 'rsa', '-b', '1024']).pub, 'is an RSA key of 1024 bits: at least 2048 are needed'],
    ['a DSA key', () => sshKeygen(['-t', 'dsa']).pub, expect.stringMatching(/^must be an ssh-ed25519, ecdsa-sha2-nistp256\/384\/521, ssh-rsa/)],
    ['garbage', () => 'not a key at all', expect.any(String)],
    ['a broken key part', () => 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA== x', 'is not a valid ssh-ed25519 key'],
    ['two keys', () => `${ed25519Line()}\n${ed25519Line()}`, expect.stringMatching(/^must be one line/)],
    ['a number', () => 42, 'must be an OpenSSH public key line'],
    ['more than 64 KiB', () => 'A'.repeat(64 * 1024 + 1), 'must be one OpenSSH public key line'],
  ])('refuses %s with 400 naming public_key', async (_what, make, message) => {
    const res = await admin.post('/api/server-keys', { name: 'bad', public_key: make() });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ errors: [{ field: 'public_key', message }] });
  });

  it('refuses a missing name and a missing key with 400 naming each', async () => {
    const res = await admin.post('/api/server-keys', {});
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['name', 'public_key']);
    expect((await admin.get('/api/server-keys/abc')).body).toEqual({ error: 'invalid id' });
  });

  it('is saved, read and deleted by administrators only; listed for operators, not viewers', async () => {
    const { id } = (await admin.post('/api/server-keys', { name: 'roles', public_key: ed25519Line() })).body;
    for (const client of [operator, viewer]) {
      expect((await client.post('/api/server-keys', { name: 'x', public_key: ed25519Line() })).status).toBe(403);
      expect((await client.get(`/api/server-keys/${id}`)).status).toBe(403);
      expect((await client.delete(`/api/server-keys/${id}`)).status).toBe(403);
    }
    expect((await viewer.get('/api/server-keys')).status).toBe(403);
    expect((await operator.get('/api/server-keys')).status).toBe(200);
    expect((await new TestClient(server.local).get('/api/server-keys')).status).toBe(401);
    expect((await admin.get(`/api/server-keys/${id}`)).status).toBe(200);
  });
});

const BODY = '#cloud-config\npackage_update: true\npackages:\n  - qemu-guest-agent\n';

describe('cloud configs', () => {
  it('are created, listed without bodies, read with them, changed and deleted by operators', async () => {
    const created = await operator.post('/api/cloud-configs', { name: 'Base', description: 'guest agent', body: BODY });
    expect(created.status, created.text).toBe(201);
    const summary = {
      id: expect.any(Number),
      name: 'Base',
      description: 'guest agent',
      size: Buffer.byteLength(BODY),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      updated_by: 'root',
      updated_at: expect.stringMatching(/Z$/),
    };
    expect(created.body).toEqual({ ...summary, body: BODY });
    const { id } = created.body;
    const listed = (await viewer.get('/api/cloud-configs')).body.find((c: { id: number }) => c.id === id);
    expect(listed).toEqual(summary);
    expect(listed.id).toBe(id);
    expect((await operator.get(`/api/cloud-configs/${id}`)).body).toEqual(created.body);

    const body2 = BODY + 'timezone: Europe/Berlin\n';
    const changed = await operator.put(`/api/cloud-configs/${id}`, { name: 'Base v2', body: body2 });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ id, name: 'Base v2', description: '', size: Buffer.byteLength(body2), body: body2 });
    expect((await admin.get(`/api/cloud-configs/${id}`)).body.body).toBe(body2);

    const entries = (await admin.get('/api/audit')).body.filter((e: { subject: { type: string } }) => e.subject.type === 'cloud_config');
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['cloud_config.update', 'cloud_config.create']);
    expect(entries[0].changes).toContainEqual({ field: 'name', before: 'Base', after: 'Base v2' });
    expect(everythingWritten()).not.toContain('qemu-guest-agent');

    expect((await operator.delete(`/api/cloud-configs/${id}`)).status).toBe(204);
    expect(await operator.get(`/api/cloud-configs/${id}`)).toMatchObject({ status: 404, body: { error: 'cloud config not found' } });
    expect((await operator.put(`/api/cloud-configs/${id}`, { name: 'x', body: BODY })).status).toBe(404);
    expect((await operator.delete(`/api/cloud-configs/${id}`)).status).toBe(404);
  });

  it('refuses a name taken in any case with 409, on create and on rename', async () => {
    expect((await admin.post('/api/cloud-configs', { name: 'Docker host', body: BODY })).status).toBe(201);
    expect(await admin.post('/api/cloud-configs', { name: 'docker HOST', body: BODY })).toMatchObject({ status: 409, body: { error: 'a cloud config of that name already exists' } });
    const other = (await admin.post('/api/cloud-configs', { name: 'Other', body: BODY })).body;
    expect((await admin.put(`/api/cloud-configs/${other.id}`, { name: 'DOCKER host', body: BODY })).status).toBe(409);
    expect((await admin.get(`/api/cloud-configs/${other.id}`)).body.name).toBe('Other');
  });

  it('lets viewers list only; reading a body and writing need content.manage', async () => {
    const { id } = (await admin.post('/api/cloud-configs', { name: 'viewer check', body: BODY })).body;
    expect((await viewer.get('/api/cloud-configs')).status).toBe(200);
    expect((await viewer.get(`/api/cloud-configs/${id}`)).status).toBe(403);
    expect((await viewer.post('/api/cloud-configs', { name: 'v', body: BODY })).status).toBe(403);
    expect((await viewer.put(`/api/cloud-configs/${id}`, { name: 'v', body: BODY })).status).toBe(403);
    expect((await viewer.delete(`/api/cloud-configs/${id}`)).status).toBe(403);
    expect((await new TestClient(server.local).get('/api/cloud-configs')).status).toBe(401);
  });

  const pad = (n: number) => '#cloud-config\n# ' + 'x'.repeat(n - '#cloud-config\n# '.length);
  /** `n` bytes of write_files entries, the rest of the size a comment line. */
  const busy = (n: number) => {
    const item = (i: number) => `  - path: /etc/homefleet/${i}\n    content: "${i}"\n`;
    let text = '#cloud-config\nwrite_files:\n';
    for (let i = 0; text.length + item(i).length + 3 < n; i++) text += item(i);
    return text + '#'.padEnd(n - text.length - 1, 'x') + '\n';
  };
  it.each([
    ['64 KiB + 1 byte', pad(64 * 1024 + 1), 'must be at most 64 KiB'],
    ['no #cloud-config line', 'packages: [curl]\n', 'must start with the line #cloud-config'],
    ['YAML that does not parse', '#cloud-config\npackages: [curl\n', expect.stringMatching(/^is not valid YAML \(line \d+, column \d+\)$/)],
    ['ssh_authorized_keys nested deep', '#cloud-config\nusers:\n  - name: a\n    groups:\n      - x: {y: [{ssh_authorized_keys: [k]}]}\n', expect.stringMatching(/^must not hold ssh_authorized_keys/)],
    ['ssh_keys', '#cloud-config\nssh_keys: {}\n', expect.stringMatching(/^must not hold ssh_keys/)],
    ['not a string', 7, 'must be cloud-init user-data starting with #cloud-config'],
  ])('refuses %s with 400 naming body, and stores nothing', async (_what, body, message) => {
    const before = (await admin.get('/api/cloud-configs')).body.length;
    const res = await admin.post('/api/cloud-configs', { name: `bad ${Math.random()}`, body });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ errors: [{ field: 'body', message }] });
    expect((await admin.get('/api/cloud-configs')).body).toHaveLength(before);
  });

  // One retry: a bound on wall time, which a loaded CI machine's scheduling alone can overrun once (test/README.md).
  it('takes exactly 64 KiB while /api/health keeps answering: the YAML is parsed on a thread of its own', { retry: 1 }, async () => {
    const run = Date.now(); // names of their own on a retry
    // A new connection for each check, no pause between them.
    const fresh = { get: (path: string) => new TestClient(server.local).get(path) };
    const polled = await whileHealthPolled(
      fresh,
      async () => {
        const burst = performance.now();
        const results = await Promise.all(
          // A comment (cheap), then 23 lists of 1,300 files (100 to 300 ms of parsing each): on the event
          // loop, the health check waited for one of them (2 s under load); all at once it waited for all.
          Array.from({ length: 24 }, (_, i) => admin.post('/api/cloud-configs', { name: `large ${i} ${run}`, body: i ? busy(64 * 1024) : pad(64 * 1024) })),
        );
        const burstMs = performance.now() - burst;
        const deep = await admin.post('/api/cloud-configs', { name: 'deep', body: '#cloud-config\na: ' + '['.repeat(30_000) + ']'.repeat(30_000) + '\n' });
        return { results, burstMs, deep };
      },
      0,
    );
    const { results, burstMs, deep } = polled.result;
    expect(results.map((r) => r.status)).toEqual(Array(24).fill(201));
    expect(results.map((r) => r.body.size)).toEqual(Array(24).fill(64 * 1024));
    expect(deep.status).toBe(400);
    expect(polled.health.length).toBeGreaterThan(0);
    // Under CI's load a health check waits for its process to be scheduled; it no longer waits for a parse.
    expect(polled.slowest, healthTimes(polled, 'the configs')).toBeLessThan(2_000);
    // Whatever the machine's speed: parsed all at once on the event loop, the slowest check waited for nearly the whole burst.
    expect(polled.slowest, healthTimes(polled, 'the configs')).toBeLessThan(burstMs / 3);
  });
});
