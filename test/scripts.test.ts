// Scripts through the BUILT server (dist/server/main.js in its own process) over real HTTP on
// 127.0.0.1, with a real SQLite file: every route for each role, bad input, parallel duplicates,
// versions and diffs (bounded: /api/health keeps answering during the worst of them), the backup,
// and that no script body reaches the log or the audit table.
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { TestClient } from './helpers/http.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';
import { healthTimes, whileHealthPolled } from './helpers/health-poll.js';

const SETUP_TOKEN = 'scripts-test-setup-token-0123456789';
const BODY = '#!/bin/bash\nset -eu\n# homefleet-secret-marker\napt-get update\napt-get -y upgrade\n';
const kib64 = 64 * 1024;
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

let server: Headless;
let dbPath: string;
let admin: TestClient;
let operator: TestClient;
let viewer: TestClient;
let anonymous: TestClient;
let serial = 0;

async function tokenClient(role: 'viewer' | 'operator'): Promise<TestClient> {
  const res = await admin.post('/api/tokens', { name: `${role} scripts`, role });
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

const script = (fields: Record<string, unknown> = {}) => ({ name: `script ${++serial}`, runs_on: 'guest', interpreter: 'bash', body: BODY, ...fields });
async function created(fields: Record<string, unknown> = {}, client = operator) {
  const res = await client.post('/api/scripts', script(fields));
  expect(res.status, res.text).toBe(201);
  return res.body;
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
  anonymous = new TestClient(server.local);
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

describe('scripts', () => {
  it('are created as version 1, listed without bodies for viewers, read with them, changed and deleted by operators', async () => {
    const res = await operator.post('/api/scripts', { name: 'Patch web', description: 'apt upgrade', runs_on: 'guest', interpreter: 'bash', body: BODY });
    expect(res.status, res.text).toBe(201);
    const summary = {
      id: expect.any(Number),
      name: 'Patch web',
      description: 'apt upgrade',
      runs_on: 'guest',
      interpreter: 'bash',
      size: Buffer.byteLength(BODY),
      sha256: sha(BODY),
      version: 1,
      updated_by: 'root',
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    };
    expect(res.body).toEqual({ ...summary, body: BODY });
    const { id } = res.body;
    expect((await viewer.get('/api/scripts')).body.find((s: { id: number }) => s.id === id)).toEqual(summary);
    expect((await operator.get(`/api/scripts/${id}`)).body).toEqual(res.body);
    expect((await admin.get(`/api/scripts/${id}`)).body).toEqual(res.body);

    const body2 = BODY + 'reboot\n';
    const changed = await operator.put(`/api/scripts/${id}`, { name: 'Patch web', runs_on: 'guest', interpreter: 'sh', body: body2 });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ id, description: '', interpreter: 'sh', version: 2, size: Buffer.byteLength(body2), sha256: sha(body2), body: body2 });

    const entries = (await admin.get('/api/audit?limit=1000')).body.filter((e: { subject: { type: string; id: string } }) => e.subject.type === 'script' && e.subject.id === String(id));
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['script.update', 'script.create']);
    expect(entries[0].changes).toEqual(
      expect.arrayContaining([
        { field: 'description', before: 'apt upgrade', after: '' },
        { field: 'interpreter', before: 'bash', after: 'sh' },
        { field: 'sha256', before: sha(BODY), after: sha(body2) },
        { field: 'version', before: 1, after: 2 },
      ]),
    );

    expect((await operator.delete(`/api/scripts/${id}`)).status).toBe(204);
    expect(await operator.get(`/api/scripts/${id}`)).toMatchObject({ status: 404, body: { error: 'script not found' } });
    expect((await operator.put(`/api/scripts/${id}`, script())).status).toBe(404);
    expect((await operator.delete(`/api/scripts/${id}`)).status).toBe(404);
    expect((await operator.get(`/api/scripts/${id}/versions`)).status).toBe(404);
    expect((await admin.get('/api/audit?limit=1')).body[0]).toMatchObject({ action: 'script.delete', detail: { sha256: sha(body2), size: Buffer.byteLength(body2) } });
    expect(everythingWritten()).not.toContain('homefleet-secret-marker');
  });

  it('lets viewers list only; bodies, versions, diffs and writes need content.manage; no session is 401', async () => {
    const { id } = await created();
    expect((await viewer.get('/api/scripts')).status).toBe(200);
    for (const [method, path] of [
      ['GET', `/api/scripts/${id}`],
      ['PUT', `/api/scripts/${id}`],
      ['DELETE', `/api/scripts/${id}`],
      ['POST', '/api/scripts'],
      ['GET', `/api/scripts/${id}/versions`],
      ['GET', `/api/scripts/${id}/versions/1`],
      ['GET', `/api/scripts/${id}/versions/1/diff`],
    ] as const) {
      const body = method === 'PUT' || method === 'POST' ? script() : undefined;
      expect((await viewer.request(method, path, body)).status, `${method} ${path} as a viewer`).toBe(403);
      expect((await anonymous.request(method, path, body)).status, `${method} ${path} without a session`).toBe(401);
      if (method === 'GET') expect((await operator.request(method, path)).status, `${method} ${path} as an operator`).toBe(200);
    }
    expect((await anonymous.get('/api/scripts')).status).toBe(401);
    expect((await admin.get(`/api/scripts/${id}`)).body.body).toBe(BODY);
  });

  it('refuses a name taken in any case with 409, on create and on rename; ten parallel creates of one name make one', async () => {
    await created({ name: 'Reboot all' });
    expect(await operator.post('/api/scripts', script({ name: 'REBOOT all' }))).toMatchObject({ status: 409, body: { error: 'a script of that name already exists' } });
    const other = await created();
    expect((await operator.put(`/api/scripts/${other.id}`, script({ name: 'reboot ALL' }))).status).toBe(409);
    expect((await operator.get(`/api/scripts/${other.id}`)).body.name).toBe(other.name);

    const results = await Promise.all(Array.from({ length: 10 }, () => operator.post('/api/scripts', script({ name: 'raced' }))));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    expect((await viewer.get('/api/scripts')).body.filter((s: { name: string }) => s.name === 'raced')).toHaveLength(1);
  });

  it.each([
    ['64 KiB + 1 byte of UTF-8 (2-byte characters)', { body: 'é'.repeat(kib64 / 2) + 'x' }, 'body', `must be at most 64 KiB (65536 bytes) of UTF-8; this one is ${kib64 + 1} bytes`],
    ['a body far over the limit', { body: 'x'.repeat(300 * 1024) }, 'body', 'must be at most 64 KiB of UTF-8'],
    ['a lone surrogate', { body: 'echo \ud800\n' }, 'body', 'must be UTF-8 text (it holds a lone surrogate)'],
    ['a NUL character', { body: 'echo a\u0000b\n' }, 'body', 'must not contain NUL characters'],
    ['an empty body', { body: ' \n' }, 'body', 'must not be empty'],
    ['a body that is not a string', { body: ['echo'] }, 'body', 'must be the script as a string'],
    ['runs_on vm', { runs_on: 'vm' }, 'runs_on', 'must be host or guest'],
    ['interpreter perl', { interpreter: 'perl' }, 'interpreter', 'must be bash, sh or python3'],
    ['no name', { name: '' }, 'name', 'must not be empty'],
    ['a name with a control character', { name: 'a\u0007b' }, 'name', 'must not contain control characters'],
  ])('refuses %s with 400 naming the field, and stores nothing', async (_what, fields, field, message) => {
    const before = (await viewer.get('/api/scripts')).body.length;
    const res = await operator.post('/api/scripts', script(fields));
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ errors: [{ field, message }] });
    expect((await viewer.get('/api/scripts')).body).toHaveLength(before);
  });

  it('takes exactly 64 KiB of UTF-8; bad JSON, a bad id and a bad version are 400, unknown ones 404', async () => {
    const full = await created({ body: 'é'.repeat(kib64 / 2) });
    expect(full.size).toBe(kib64);
    expect((await operator.post('/api/scripts', '{"name":')).status).toBe(400);
    expect(await operator.get('/api/scripts/abc')).toMatchObject({ status: 400 });
    expect(await operator.get(`/api/scripts/${full.id}/versions/x`)).toMatchObject({ status: 400 });
    expect(await operator.get(`/api/scripts/${full.id}/versions/1/diff?against=-1`)).toMatchObject({ status: 400 });
    expect(await operator.get('/api/scripts/999999')).toMatchObject({ status: 404, body: { error: 'script not found' } });
    expect(await operator.get(`/api/scripts/${full.id}/versions/9`)).toMatchObject({ status: 404, body: { error: 'version not found: the last 20 are kept' } });
    expect(await operator.get(`/api/scripts/${full.id}/versions/1/diff?against=7`)).toMatchObject({ status: 404 });
  });
});

describe('script versions', () => {
  it('a new body is a new version, a rename is not; each version is read whole and diffed against the one before or any other', async () => {
    const v1 = await created({ body: 'echo one\necho two\necho three\n' });
    const put = (fields: Record<string, unknown>) => operator.put(`/api/scripts/${v1.id}`, { name: v1.name, runs_on: 'guest', interpreter: 'bash', body: v1.body, ...fields });
    expect((await put({ body: 'echo one\necho 2\necho three\n' })).body.version).toBe(2);
    expect((await put({ name: `${v1.name} renamed`, body: 'echo one\necho 2\necho three\n' })).body.version).toBe(2);
    expect((await put({ name: `${v1.name} renamed`, body: 'echo one\necho 2\necho three\necho four\n' })).body.version).toBe(3);

    const versions = (await operator.get(`/api/scripts/${v1.id}/versions`)).body;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(versions[2]).toEqual({ version: 1, size: v1.size, sha256: v1.sha256, updated_by: 'root', updated_at: expect.any(String) });
    const v2 = await operator.get(`/api/scripts/${v1.id}/versions/2`);
    expect(v2.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(v2.text).toBe('echo one\necho 2\necho three\n');

    const name = `${v1.name} renamed`;
    const diff = await operator.get(`/api/scripts/${v1.id}/versions/2/diff`);
    expect(diff.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(diff.text).toBe(`--- a/${name} (version 1)\n+++ b/${name} (version 2)\n@@ -1,3 +1,3 @@\n echo one\n-echo two\n+echo 2\n echo three\n`);
    expect((await operator.get(`/api/scripts/${v1.id}/versions/3/diff?against=1`)).text).toBe(
      `--- a/${name} (version 1)\n+++ b/${name} (version 3)\n@@ -1,3 +1,4 @@\n echo one\n-echo two\n+echo 2\n echo three\n+echo four\n`,
    );
    expect((await operator.get(`/api/scripts/${v1.id}/versions/1/diff`)).text).toBe(
      `--- /dev/null\n+++ b/${name} (version 1)\n@@ -0,0 +1,3 @@\n+echo one\n+echo two\n+echo three\n`,
    );
  });

  it('keeps the last 20', async () => {
    const { id, name } = await created({ body: 'echo 1\n' });
    for (let i = 2; i <= 22; i++) expect((await operator.put(`/api/scripts/${id}`, script({ name, body: `echo ${i}\n` }))).status).toBe(200);
    const versions = (await operator.get(`/api/scripts/${id}/versions`)).body.map((v: { version: number }) => v.version);
    expect(versions).toEqual(Array.from({ length: 20 }, (_, i) => 22 - i));
    expect((await operator.get(`/api/scripts/${id}/versions/2`)).status).toBe(404);
    // The oldest kept is diffed against nothing before it.
    expect((await operator.get(`/api/scripts/${id}/versions/3/diff`)).text).toMatch(/^--- \/dev\/null\n/);
  });

  // One retry: a bound on wall time, which a loaded CI machine's scheduling alone can overrun once (test/README.md).
  it('the worst diffs of two 64 KiB bodies answer (422 or a diff) while /api/health keeps answering', { retry: 1, timeout: 60_000 }, async () => {
    // All lines different: turned away before any diffing. 1,000 changed lines among 6,000: diffed,
    // in steps of the event loop, within the diff's own bounds.
    const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join('\n') + '\n';
    const a = lines(6000, (i) => `echo a${i}`);
    const b = lines(6000, (i) => `echo b${i}`);
    const c = lines(6000, (i) => (i % 12 === 0 ? `echo c${i}` : `echo a${i}`));
    for (const text of [a, b, c]) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(kib64);
    const { id, name } = await created({ body: a });
    for (const body of [b, c]) expect((await operator.put(`/api/scripts/${id}`, script({ name, body }))).status).toBe(200);

    // No pause between health checks: the diffs are short, the loop is asked as often as it can answer.
    const polled = await whileHealthPolled(
      anonymous,
      () =>
        Promise.all([
          ...Array.from({ length: 4 }, () => operator.get(`/api/scripts/${id}/versions/2/diff`)),
          ...Array.from({ length: 4 }, () => operator.get(`/api/scripts/${id}/versions/3/diff?against=1`)),
        ]),
      0,
    );
    const diffs = polled.result;
    expect(diffs.slice(0, 4).map((d) => d.status)).toEqual(Array(4).fill(422));
    expect(diffs[0]!.body).toEqual({ error: 'the versions differ too much to show a diff' });
    for (const d of diffs.slice(4)) expect([200, 422]).toContain(d.status);
    expect(polled.health.length).toBeGreaterThan(0);
    expect(polled.slowest, healthTimes(polled, 'the diffs')).toBeLessThan(1_000);
  });
});

describe('scripts in the backup', () => {
  it('are exported with their versions and imported back as they were; a document without scripts leaves them', async () => {
    const kept = await created({ name: 'backed up', body: 'echo 1\n', runs_on: 'host', interpreter: 'python3' });
    expect((await operator.put(`/api/scripts/${kept.id}`, script({ name: 'backed up', runs_on: 'host', interpreter: 'python3', body: 'print(2)\n' }))).status).toBe(200);
    const doc = (await admin.get('/api/export')).body;
    const exported = doc.scripts.find((s: { id: number }) => s.id === kept.id);
    expect(exported).toMatchObject({ name: 'backed up', body: 'print(2)\n', version: 2, versions: [{ version: 1, body: 'echo 1\n' }, { version: 2, body: 'print(2)\n' }] });
    const before = (await viewer.get('/api/scripts')).body;

    await created({ name: 'made after the export' });
    expect((await admin.post('/api/import', doc)).status).toBe(200);
    expect((await viewer.get('/api/scripts')).body).toEqual(before);
    expect((await operator.get(`/api/scripts/${kept.id}/versions/1/diff`)).text).toContain('+echo 1');

    const { scripts: _scripts, ...withoutScripts } = doc;
    await created({ name: 'survives an import without scripts' });
    expect((await admin.post('/api/import', withoutScripts)).status).toBe(200);
    expect((await viewer.get('/api/scripts')).body.map((s: { name: string }) => s.name)).toContain('survives an import without scripts');

    const bad = { ...doc, scripts: [...doc.scripts, { ...exported, id: 999_999, name: 'dup', body: 'x'.repeat(kib64 + 1) }] };
    const refused = await admin.post('/api/import', bad);
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ field: `scripts[${doc.scripts.length}].body` });
    expect((await viewer.get('/api/scripts')).body.map((s: { name: string }) => s.name)).toContain('survives an import without scripts');
  });
});
