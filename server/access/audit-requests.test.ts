import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { agentDir, enrolledHost, heartbeat, startHostServer } from '../../test/helpers/hosts.js';
import type { TestClient, TestResponse } from '../../test/helpers/http.js';
import { json, startMockRemote, type MockRemote } from '../../test/helpers/remote.js';
import { TOTP } from 'otpauth';
import { TestClient as Client } from '../../test/helpers/http.js';
import { ADMIN_PASSWORD, logIn, USER_PASSWORD, type TestServer } from '../../test/helpers/server.js';
import { softPasskey } from '../../test/helpers/webauthn.js';
import { ed25519Line } from '../../test/helpers/ssh-keys.js';
import { multipart } from '../../test/helpers/multipart.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import type { AuditEntry } from '../audit.js';

// PRODUCT.md: "A successful management request (non-GET, 2xx) writes `request` with method, path
// and status", or its own entry (user.create, token.revoke, host.update…). Issue 26: the entry is
// written inside the change's transaction and names the request (X-Request-Id) that made it.

let server: TestServer;
let mock: MockRemote;
beforeEach(async () => {
  mock = await startMockRemote(json(200, { devices: [] }));
  // A database file: snapshots need one, and the three built-in jobs are seeded into it.
  server = await startHostServer({ dbPath: tempDbPath(), hosts: { agentDir: agentDir('1.1.0') } });
});
afterEach(async () => {
  await server.stop();
  await mock.close();
  removeTempDbs();
});

const audit = async (): Promise<AuditEntry[]> => (await server.client.get('/api/audit?limit=1000')).body;
const newUser = async () => (await server.client.post('/api/users', { username: `u${Math.random().toString(36).slice(2, 8)}`, display_name: 'U', role: 'viewer' })).body.user.id as number;
const newInstance = async () => {
  const body = buildInstance({ stack: 'development' });
  expect((await server.client.post('/api/instances', body)).status).toBe(201);
  return body.vmid as number;
};
const tailscaleJob = async () => (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === 'tailscale_sync').id as number;

/** A viewer with TOTP turned on; returns its browser. */
const totpUser = async () => {
  const other = await server.signIn('viewer');
  const { secret } = (await other.post('/api/auth/totp/setup')).body;
  expect((await other.post('/api/auth/totp/confirm', { code: new TOTP({ secret }).generate({ timestamp: server.context.clock.now() }) })).status).toBe(200);
  return other;
};
/** A viewer's browser at http://localhost:<port> (passkeys need a host name), with one passkey registered. */
const passkeyUser = async () => {
  const username = `p${Math.random().toString(36).slice(2, 8)}`;
  await server.accounts.create({ username, display_name: username, role: 'viewer', password: USER_PASSWORD });
  const browser = await logIn(new Client(server.baseUrl.replace('127.0.0.1', 'localhost')), username, USER_PASSWORD);
  const key = softPasskey();
  const options = (await browser.post('/api/auth/passkeys/register/options', { password: USER_PASSWORD })).body;
  const added = await browser.post('/api/auth/passkeys/register/verify', { name: 'Laptop', response: key.register(options, browser.baseUrl) });
  expect(added.status, added.text).toBe(201);
  return { browser, id: added.body.id as number };
};

type Send = (headers: Record<string, string>) => Promise<TestResponse>;
/** Each management write, made to succeed: prepares what it needs, then sends the request with the given headers. */
const writes: Record<string, () => Promise<Send>> = {
  'POST /api/auth/logout': async () => {
    const other = await server.signIn('viewer');
    return (h) => other.post('/api/auth/logout', undefined, h);
  },
  'POST /api/auth/password': async () => {
    const other = await server.signIn('viewer');
    return (h) => other.post('/api/auth/password', { current_password: 'user-password-for-tests', new_password: 'another-password-1' }, h);
  },
  'POST /api/auth/totp/setup': async () => {
    const other = await server.signIn('viewer');
    return (h) => other.post('/api/auth/totp/setup', undefined, h);
  },
  'POST /api/auth/totp/confirm': async () => {
    const other = await server.signIn('viewer');
    const { secret } = (await other.post('/api/auth/totp/setup')).body;
    return (h) => other.post('/api/auth/totp/confirm', { code: new TOTP({ secret }).generate({ timestamp: server.context.clock.now() }) }, h);
  },
  'DELETE /api/auth/totp': async () => {
    const other = await totpUser();
    return (h) => other.request('DELETE', '/api/auth/totp', { password: USER_PASSWORD }, h);
  },
  'DELETE /api/users/:id/second-factor': async () => {
    const other = await totpUser();
    const { id } = (await other.get('/api/auth/session')).body.user;
    return (h) => server.client.delete(`/api/users/${id}/second-factor`, h);
  },
  'POST /api/auth/passkeys/register/options': async () => {
    const { browser } = await passkeyUser();
    return (h) => browser.post('/api/auth/passkeys/register/options', { password: USER_PASSWORD }, h);
  },
  'POST /api/auth/passkeys/register/verify': async () => {
    const { browser } = await passkeyUser();
    const options = (await browser.post('/api/auth/passkeys/register/options', { password: USER_PASSWORD })).body;
    return (h) => browser.post('/api/auth/passkeys/register/verify', { name: 'Phone', response: softPasskey().register(options, browser.baseUrl) }, h);
  },
  'PATCH /api/auth/passkeys/:id': async () => {
    const { browser, id } = await passkeyUser();
    return (h) => browser.patch(`/api/auth/passkeys/${id}`, { name: 'Old laptop' }, h);
  },
  'DELETE /api/auth/passkeys/:id': async () => {
    const { browser, id } = await passkeyUser();
    return (h) => browser.delete(`/api/auth/passkeys/${id}`, h);
  },
  'POST /api/users': async () => (h) => server.client.post('/api/users', { username: 'newcomer', display_name: 'N', role: 'viewer' }, h),
  'PATCH /api/users/:id': async () => {
    const id = await newUser();
    return (h) => server.client.patch(`/api/users/${id}`, { role: 'operator' }, h);
  },
  'POST /api/users/:id/reset-password': async () => {
    const id = await newUser();
    return (h) => server.client.post(`/api/users/${id}/reset-password`, undefined, h);
  },
  'POST /api/users/:id/revoke-sessions': async () => {
    const id = await newUser();
    return (h) => server.client.post(`/api/users/${id}/revoke-sessions`, undefined, h);
  },
  'POST /api/tokens': async () => (h) => server.client.post('/api/tokens', { name: 'script', role: 'viewer' }, h),
  'DELETE /api/tokens/:id': async () => {
    const { id } = (await server.client.post('/api/tokens', { name: 'old', role: 'viewer' })).body;
    return (h) => server.client.delete(`/api/tokens/${id}`, h);
  },
  'POST /api/instances': async () => (h) => server.client.post('/api/instances', buildInstance(), h),
  'PUT /api/instances/:vmid': async () => {
    const vmid = await newInstance();
    return (h) => server.client.put(`/api/instances/${vmid}`, { state: 'testing' }, h);
  },
  'DELETE /api/instances/:vmid': async () => {
    const vmid = await newInstance();
    return (h) => server.client.delete(`/api/instances/${vmid}`, h);
  },
  'POST /api/instances/bulk': async () => {
    const vmids = [await newInstance(), await newInstance()];
    return (h) => server.client.post('/api/instances/bulk', { vmids, add_tags: ['web'] }, h);
  },
  'POST /api/collections': async () => (h) => server.client.post('/api/collections', { name: `c${Math.random()}`, filter: { tags: ['web'] } }, h),
  'PUT /api/collections/:id': async () => {
    const { id } = (await server.client.post('/api/collections', { name: 'web' })).body;
    return (h) => server.client.put(`/api/collections/${id}`, { name: 'web tier' }, h);
  },
  'DELETE /api/collections/:id': async () => {
    const { id } = (await server.client.post('/api/collections', { name: 'old' })).body;
    return (h) => server.client.delete(`/api/collections/${id}`, h);
  },
  'PUT /api/jobs/:id': async () => {
    const id = await tailscaleJob();
    return (h) => server.client.put(`/api/jobs/${id}`, { schedule: 30 }, h);
  },
  'POST /api/jobs/:id/run': async () => {
    const id = await tailscaleJob();
    await server.client.put(`/api/jobs/${id}`, { config: { api_key: 'tskey-audit', api_url: mock.url } });
    return (h) => server.client.post(`/api/jobs/${id}/run`, undefined, h);
  },
  'POST /api/import': async () => (h) => server.client.post('/api/import', { version: 3, instances: [buildInstance()] }, h),
  'POST /api/snapshots': async () => (h) => server.client.post('/api/snapshots', undefined, h),
  'POST /api/hosts/enrollment-tokens': async () => (h) => server.client.post('/api/hosts/enrollment-tokens', {}, h),
  'DELETE /api/hosts/enrollment-tokens/:id': async () => {
    const { id } = (await server.client.post('/api/hosts/enrollment-tokens', {})).body;
    return (h) => server.client.delete(`/api/hosts/enrollment-tokens/${id}`, h);
  },
  'PATCH /api/hosts/:id': async () => {
    const { host_id } = await enrolledHost(server);
    return (h) => server.client.patch(`/api/hosts/${host_id}`, { sync_registry: true }, h);
  },
  'DELETE /api/hosts/:id': async () => {
    const { host_id } = await enrolledHost(server);
    return (h) => server.client.delete(`/api/hosts/${host_id}`, h);
  },
  'POST /api/hosts/:id/revoke-token': async () => {
    const { host_id } = await enrolledHost(server);
    return (h) => server.client.post(`/api/hosts/${host_id}/revoke-token`, undefined, h);
  },
  'POST /api/hosts/:id/upgrade': async () => {
    const { host_id } = await enrolledHost(server);
    return (h) => server.client.post(`/api/hosts/${host_id}/upgrade`, {}, h);
  },
  'POST /api/hosts/:id/drift/apply': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    // A guest without an instance: drift to apply (applying none is no change, and no entry).
    expect((await heartbeat(server, host_token, { guests: [{ vmid: 9103, name: 'new', type: 'lxc', status: 'running' }] })).status).toBe(200);
    return (h) => server.client.post(`/api/hosts/${host_id}/drift/apply`, { all: true }, h);
  },
  'POST /api/hosts/:id/guests/:vmid/actions': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    expect((await heartbeat(server, host_token, { guests: [{ vmid: 9104, name: 'web', type: 'qemu', status: 'running' }] })).status).toBe(200);
    return (h) => server.client.post(`/api/hosts/${host_id}/guests/9104/actions`, { action: 'stop' }, h);
  },
  'POST /api/scripts': async () => (h) => server.client.post('/api/scripts', { name: `s${Math.random()}`, runs_on: 'guest', interpreter: 'bash', body: 'uptime\n' }, h),
  'PUT /api/scripts/:id': async () => {
    const { id } = (await server.client.post('/api/scripts', { name: 'patch', runs_on: 'guest', interpreter: 'bash', body: 'apt-get update\n' })).body;
    return (h) => server.client.put(`/api/scripts/${id}`, { name: 'patch', runs_on: 'guest', interpreter: 'bash', body: 'apt-get update && apt-get -y upgrade\n' }, h);
  },
  'DELETE /api/scripts/:id': async () => {
    const { id } = (await server.client.post('/api/scripts', { name: 'old', runs_on: 'host', interpreter: 'sh', body: 'true\n' })).body;
    return (h) => server.client.delete(`/api/scripts/${id}`, h);
  },
  'POST /api/campaigns': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    expect((await heartbeat(server, host_token, { guests: [{ vmid: 9301, name: 'web', type: 'lxc', status: 'running' }] })).status).toBe(200);
    return (h) => server.client.post('/api/campaigns', { name: 'reboot web', target: { host_ids: [host_id] }, step: { type: 'guest.action', action: 'reboot' } }, h);
  },
  ...Object.fromEntries(
    (['pause', 'resume', 'cancel'] as const).map((verb) => [
      `POST /api/campaigns/:id/${verb}`,
      async (): Promise<Send> => {
        const { host_token } = await enrolledHost(server);
        expect((await heartbeat(server, host_token, { guests: [{ vmid: 9302, name: 'a', type: 'lxc', status: 'running' }, { vmid: 9303, name: 'b', type: 'lxc', status: 'running' }] })).status).toBe(200);
        const made = await server.client.post('/api/campaigns', { name: `${verb} me`, target: { vmids: [9302, 9303] }, step: { type: 'guest.action', action: 'reboot' }, pause_s: 3600 });
        expect(made.status, made.text).toBe(201);
        if (verb === 'resume') expect((await server.client.post(`/api/campaigns/${made.body.id}/pause`)).status).toBe(200);
        return (h) => server.client.post(`/api/campaigns/${made.body.id}/${verb}`, undefined, h);
      },
    ]),
  ),
  'PUT /api/policies': async () => (h) => server.client.put('/api/policies', [{ scope: { stack: 'production' }, checks: { running: true } }], h),
  'POST /api/hosts/:id/deploy': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    expect((await heartbeat(server, host_token, { guests: [{ vmid: 9000, name: 'debian-12', type: 'qemu', status: 'stopped', template: true }] })).status).toBe(200);
    let vmid = 9200;
    return (h) => server.client.post(`/api/hosts/${host_id}/deploy`, { source_vmid: 9000, new_vmid: ++vmid, name: `deployed-${vmid}` }, h);
  },
  'POST /api/hosts/:id/storage/:storage/downloads': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    expect((await heartbeat(server, host_token, { guests: [], storages: [LOCAL_STORAGE] })).status).toBe(200);
    return (h) => server.client.post(`/api/hosts/${host_id}/storage/local/downloads`, { url: 'https://example.org/debian.iso', filename: 'debian.iso', content: 'iso' }, h);
  },
  'POST /api/hosts/:id/storage/:storage/files': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    expect((await heartbeat(server, host_token, { guests: [], storages: [LOCAL_STORAGE] })).status).toBe(200);
    const { id } = (await uploadFile(`push ${Math.random()}`)).body;
    return (h) => server.client.post(`/api/hosts/${host_id}/storage/local/files`, { file_id: id, content: 'iso' }, h);
  },
  'DELETE /api/operations/:id': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    await heartbeat(server, host_token, { guests: [{ vmid: 9105, name: 'web', type: 'qemu', status: 'running' }] });
    const { operation_id } = (await server.client.post(`/api/hosts/${host_id}/guests/9105/actions`, { action: 'stop' })).body;
    return (h) => server.client.delete(`/api/operations/${operation_id}`, h);
  },
  'POST /api/hosts/:id/logs': async () => {
    const { host_id, host_token } = await enrolledHost(server);
    await heartbeat(server, host_token);
    return (h) => server.client.post(`/api/hosts/${host_id}/logs`, undefined, h);
  },
  'PUT /api/hosts/:id/maintenance': async () => {
    const { host_id } = await enrolledHost(server);
    return (h) => server.client.put(`/api/hosts/${host_id}/maintenance`, { windows: [{ days: ['sun'], start: '02:00', end: '04:00' }], timezone: 'UTC' }, h);
  },
  'PUT /api/alerts/rules/:rule': async () => (h) => server.client.put('/api/alerts/rules/host.cpu', { percent: 90 }, h),
  'POST /api/notifications/channels': async () => (h) => server.client.post('/api/notifications/channels', { name: 'hook', type: 'webhook', config: { url: mock.url }, rules: 'all' }, h),
  'PUT /api/notifications/channels/:id': async () => {
    const { id } = (await server.client.post('/api/notifications/channels', { name: 'hook', type: 'webhook', config: { url: mock.url }, rules: 'all' })).body;
    return (h) => server.client.put(`/api/notifications/channels/${id}`, { name: 'hook 2', type: 'webhook', config: { url: mock.url }, rules: 'all' }, h);
  },
  'DELETE /api/notifications/channels/:id': async () => {
    const { id } = (await server.client.post('/api/notifications/channels', { name: 'hook', type: 'webhook', config: { url: mock.url }, rules: 'all' })).body;
    return (h) => server.client.delete(`/api/notifications/channels/${id}`, h);
  },
  'POST /api/notifications/channels/:id/test': async () => {
    const { id } = (await server.client.post('/api/notifications/channels', { name: 'hook', type: 'webhook', config: { url: mock.url }, rules: 'all' })).body;
    return (h) => server.client.post(`/api/notifications/channels/${id}/test`, undefined, h);
  },
  'POST /api/server-keys': async () => (h) => server.client.post('/api/server-keys', { name: 'laptop', public_key: ed25519Line() }, h),
  'DELETE /api/server-keys/:id': async () => {
    const { id } = (await server.client.post('/api/server-keys', { name: 'laptop', public_key: ed25519Line() })).body;
    return (h) => server.client.delete(`/api/server-keys/${id}`, h);
  },
  'POST /api/cloud-configs': async () => (h) => server.client.post('/api/cloud-configs', { name: 'base', body: '#cloud-config\n' }, h),
  'PUT /api/cloud-configs/:id': async () => {
    const { id } = (await server.client.post('/api/cloud-configs', { name: 'base', body: '#cloud-config\n' })).body;
    return (h) => server.client.put(`/api/cloud-configs/${id}`, { name: 'base 2', body: '#cloud-config\nhostname: a\n' }, h);
  },
  'DELETE /api/cloud-configs/:id': async () => {
    const { id } = (await server.client.post('/api/cloud-configs', { name: 'base', body: '#cloud-config\n' })).body;
    return (h) => server.client.delete(`/api/cloud-configs/${id}`, h);
  },
  'POST /api/files': async () => (h) => uploadFile(`${Math.random()}`, h),
  'DELETE /api/files/:id': async () => {
    const { id } = (await uploadFile(`${Math.random()}`)).body;
    return (h) => server.client.delete(`/api/files/${id}`, h);
  },
};

/** A directory storage as a heartbeat reports it. */
const LOCAL_STORAGE = { storage: 'local', type: 'dir', content: ['iso', 'vztmpl', 'snippets'], avail: 1e10, total: 2e10, active: true, shared: false };

/** POST /api/files as the signed-in administrator's browser: one file part. */
async function uploadFile(content: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  const { body, contentType } = multipart([{ name: 'file', filename: 'notes.txt', data: content }]);
  const res = await fetch(`${server.baseUrl}/api/files`, {
    method: 'POST',
    headers: { cookie: server.client.cookieHeader(), origin: server.baseUrl, 'content-type': contentType, ...headers },
    body: new Uint8Array(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text), text };
}

describe('every management write', () => {
  it('is in the list above: a new one needs its case', () => {
    const declared = server.routes.filter((r) => r.method !== 'GET' && r.access !== 'public' && r.access !== 'machine').map((r) => `${r.method} ${r.path}`);
    expect(Object.keys(writes).sort()).toEqual(declared.sort());
  });

  // A write that changes several objects records one change each: an applied drift changes the instance (as the host's agent) and is the operator's act on the host;
  // a deploy creates the new guest's instance and asks the host for the guest.
  // A bulk edit is an edit of each instance it changes (here two). A campaign starts its first wave
  // (here one guest's reboot) as it is made; cancelling one cancels the operation its wave runs.
  const objects: Record<string, number> = {
    'POST /api/hosts/:id/drift/apply': 2,
    'POST /api/hosts/:id/deploy': 2,
    'POST /api/instances/bulk': 2,
    'POST /api/campaigns': 2,
    'POST /api/campaigns/:id/cancel': 2,
  };

  it.each(Object.keys(writes))('%s leaves one entry per object it touches, naming its request', async (name) => {
    const send = await writes[name]!();
    const requestId = `req-${name.replace(/[^a-z]+/gi, '-')}`;
    const before = (await audit()).length;
    const res = await send({ 'x-request-id': requestId });
    expect(res.status, res.text).toBeLessThan(300);
    expect(res.headers.get('x-request-id')).toBe(requestId);
    const mine = (await audit()).filter((e) => e.request_id === requestId);
    const count = objects[name] ?? 1;
    expect(mine, JSON.stringify(await audit())).toHaveLength(count);
    expect((await audit()).length).toBe(before + count);
    for (const entry of mine) {
      if (entry.action === 'request') {
        const [method] = name.split(' ');
        // The route's status, though no handler sets it before the change is written.
        expect(entry.detail).toMatchObject({ method, status: res.status });
      }
      // Every entry says itself what happened and what it is about: the dashboard parses nothing.
      expect(entry.summary).toMatch(/\w+ \w+/);
      expect(entry.subject).toMatchObject({ type: expect.stringMatching(/^[a-z_]+$/) });
    }
  });
});

describe('what an entry records', () => {
  it('the changed thing by name, and each field before and after', async () => {
    await server.client.post('/api/instances', buildInstance({ vmid: 102, name: 'web', state: 'deployed', stack: 'development' }));
    await server.client.put('/api/instances/102', { state: 'testing', name: 'web-2' }, { 'x-request-id': 'put-102' });
    const [entry] = await audit();
    expect(entry).toMatchObject({
      actor: 'admin',
      action: 'request',
      target: 'instance 102',
      detail: { method: 'PUT', path: '/api/instances/102', status: 200, fields: ['name', 'state'] },
      subject: { type: 'instance', id: '102', name: 'web-2' },
      summary: 'admin changed instance 102 “web-2”: name, state',
      changes: [
        { field: 'name', before: 'web', after: 'web-2' },
        { field: 'state', before: 'deployed', after: 'testing' },
      ],
      request_id: 'put-102',
    });
    expect(Object.keys(entry!).sort()).toEqual(['action', 'actor', 'actor_type', 'at', 'changes', 'detail', 'id', 'ip', 'request_id', 'subject', 'summary', 'target']);
  });

  it('a job’s secret field by name only, never its value', async () => {
    const id = await tailscaleJob();
    await server.client.put(`/api/jobs/${id}`, { schedule: 45, config: { api_key: 'tskey-secret-value', api_url: 'http://127.0.0.1:9/' } });
    const [entry] = await audit();
    expect(entry!.changes).toEqual([
      { field: 'schedule', before: 15, after: 45 },
      { field: 'config.api_key' },
      { field: 'config.api_url', before: null, after: 'http://127.0.0.1:9/' },
    ]);
    expect(entry!.summary).toBe('admin changed the settings of job “Tailscale sync”: schedule, config.api_key, config.api_url');
    expect(JSON.stringify(await audit())).not.toContain('tskey-secret-value');
  });

  it('the same entry on the live stream as in the list', async () => {
    const live: AuditEntry[] = [];
    server.context.bus.on('audit.entry', (entry) => live.push(entry));
    await server.client.delete(`/api/instances/${await newInstance()}`, { 'x-request-id': 'delete-it' });
    const [listed] = await audit();
    expect(live.at(-1)).toEqual(listed);
    expect(listed).toMatchObject({ summary: expect.stringMatching(/^admin deleted instance \d+ “/), request_id: 'delete-it' });
  });

  it('a sign-in and a failed one, with their requests', async () => {
    const browser: TestClient = server.anonymous();
    await browser.post('/api/auth/login', { username: 'admin', password: 'wrong-password' }, { 'x-request-id': 'bad-login' });
    await browser.post('/api/auth/login', { username: 'admin', password: ADMIN_PASSWORD }, { 'x-request-id': 'good-login' });
    // The new sign-in ended server.client's session ("one browser session per account"): read as the new one.
    const [success, failure] = (await browser.get('/api/audit')).body as AuditEntry[];
    expect(failure).toMatchObject({ action: 'login.failure', actor: null, summary: 'login failed for admin from 127.0.0.1', request_id: 'bad-login', subject: { type: 'login', id: 'admin', name: 'admin' } });
    expect(success).toMatchObject({ action: 'login.success', summary: 'admin signed in from 127.0.0.1', request_id: 'good-login', subject: { type: 'user', name: 'admin' } });
  });
});

describe('X-Request-Id', () => {
  it('is echoed when well formed, and made up when absent or malformed', async () => {
    expect((await server.client.get('/api/instances', { 'x-request-id': 'abc-123_DEF.4' })).headers.get('x-request-id')).toBe('abc-123_DEF.4');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const made = [
      (await server.client.get('/api/instances')).headers.get('x-request-id'),
      (await server.client.get('/api/instances', { 'x-request-id': 'has space' })).headers.get('x-request-id'),
      (await server.client.get('/api/instances', { 'x-request-id': 'x'.repeat(129) })).headers.get('x-request-id'),
      (await server.client.get('/api/instances', { 'x-request-id': '"quoted"' })).headers.get('x-request-id'),
      (await server.anonymous().get('/api/nothing-here')).headers.get('x-request-id'),
    ];
    for (const id of made) expect(id).toMatch(uuid);
    expect(new Set(made).size).toBe(made.length);
  });
});
