import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { bearer, enrolledHost, heartbeat, startHostServer, type Enrolled } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';
import type { AuditEntry } from '../audit.js';
import type { HttpError } from '../errors.js';

// PRODUCT.md "Collections, scripts, campaigns and release channels": a script runs only in a
// campaign, as an operation of type `script` that campaigns queue with operations.scripts.request.
// There is no HTTP route for it: these tests call it as campaigns do, and play the agent over HTTP.

const GUESTS = [
  { vmid: 100, name: 'web', type: 'qemu', status: 'running' },
  { vmid: 101, name: 'build', type: 'qemu', status: 'stopped' },
  { vmid: 200, name: 'db', type: 'lxc', status: 'running' },
  { vmid: 201, name: 'cache', type: 'lxc', status: 'running', lock: 'backup' },
  { vmid: 202, name: 'mail', type: 'lxc', status: 'running' },
  { vmid: 9000, name: 'template', type: 'qemu', status: 'stopped', template: true },
];
const BODY = '#!/bin/bash\napt-get -y upgrade\n';
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const WHO = { actor: 'alice' };

let server: TestServer;
let clock: ReturnType<typeof manualClock>;
let host: Enrolled;
let guestScript: number;
let hostScript: number;

beforeEach(async () => {
  clock = manualClock();
  server = await startHostServer({ clock });
  host = await enrolledHost(server);
  expect((await heartbeat(server, host.host_token, { guests: GUESTS })).status).toBe(200);
  guestScript = (await server.client.post('/api/scripts', { name: 'patch', runs_on: 'guest', interpreter: 'bash', body: BODY })).body.id;
  hostScript = (await server.client.post('/api/scripts', { name: 'host check', runs_on: 'host', interpreter: 'sh', body: 'uptime\n' })).body.id;
});
afterEach(() => server.stop());

const request = (vmid: number | null, scriptId = guestScript, timeoutS?: number, hostId = host.host_id) =>
  server.operations.scripts.request(hostId, vmid, scriptId, timeoutS, WHO);
const operation = async (id: string) => (await server.client.get(`/api/operations/${id}`)).body;
const poll = async () => (await server.anonymous().get('/api/agent/commands?wait=0', bearer(host.host_token))).body?.commands ?? [];
const result = (id: string, body: Record<string, unknown>) => server.anonymous().post(`/api/agent/operations/${id}/result`, body, bearer(host.host_token));
/** The HttpError a call throws, as status and body. */
function refusal(call: () => unknown): { status: number; body: unknown } {
  try {
    call();
  } catch (err) {
    return { status: (err as HttpError).status, body: (err as HttpError).body };
  }
  throw new Error('expected a refusal');
}

describe('operations.scripts.request', () => {
  it('queues a pending script operation; the command carries the body, its SHA-256, the interpreter, the vmid and timeout_s', async () => {
    const accepted = request(200, guestScript, 600);
    expect(accepted).toEqual({ operation_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending' });
    expect(await operation(accepted.operation_id)).toMatchObject({
      host_id: host.host_id, vmid: 200, type: 'script', action: null, status: 'pending', requested_by: 'alice',
      params: { script_id: guestScript, script_name: 'patch', timeout_s: 600 },
    });
    expect(await poll()).toEqual([
      { type: 'script', operation_id: accepted.operation_id, script_id: guestScript, sha256: sha(BODY), interpreter: 'bash', body: BODY, vmid: 200, timeout_s: 600 },
    ]);
    expect((await operation(accepted.operation_id)).status).toBe('sent');
    // Handed out once.
    expect(await poll()).toEqual([]);
  });

  it('on the host: no vmid in the command, timeout_s 300 by default', async () => {
    const { operation_id } = request(null, hostScript);
    expect(await poll()).toEqual([{ type: 'script', operation_id, script_id: hostScript, sha256: sha('uptime\n'), interpreter: 'sh', body: 'uptime\n', timeout_s: 300 }]);
  });

  it('keeps the last 64 KiB of the output and ends as the exit code says', async () => {
    const { operation_id } = request(100);
    await poll();
    const output = 'x'.repeat(70 * 1024) + 'the end\n';
    expect((await result(operation_id, { exit_code: 3, output })).status).toBe(204);
    const op = await operation(operation_id);
    expect(op).toMatchObject({ status: 'failed', exit_code: 3 });
    expect(op.output).toBe(output.slice(-64 * 1024));
  });

  it('reads the body when the command is handed out: a changed script goes as it is now, a deleted one fails the run naming it', async () => {
    const changed = request(200);
    const deleted = request(100);
    const body2 = BODY + 'reboot\n';
    expect((await server.client.put(`/api/scripts/${guestScript}`, { name: 'patch', runs_on: 'guest', interpreter: 'bash', body: body2 })).status).toBe(200);
    expect((await poll()).map((c: { sha256: string }) => c.sha256)).toEqual([sha(body2), sha(body2)]);

    const other = (await server.client.post('/api/scripts', { name: 'gone soon', runs_on: 'guest', interpreter: 'bash', body: 'true\n' })).body.id;
    const { operation_id } = request(202, other);
    expect((await server.client.delete(`/api/scripts/${other}`)).status).toBe(204);
    expect(await poll()).toEqual([]);
    expect(await operation(operation_id)).toMatchObject({
      status: 'failed',
      output: `homefleet: script “gone soon” (id ${other}) was deleted after the run was asked for; nothing was run\n`,
    });
    expect([changed, deleted].every((a) => a.status === 'pending')).toBe(true);
  });

  it.each([
    ['an unknown script', () => request(200, 99_999), 404, { error: 'script not found' }],
    ['an unknown host', () => request(200, guestScript, undefined, 99_999), 404, { error: 'host not found' }],
    ['a guest the host did not list', () => request(555), 404, { error: 'guest not found' }],
    ['a guest script on the host', () => request(null), 409, { error: 'script “patch” runs in guests: name a guest' }],
    ['a host script in a guest', () => request(200, hostScript), 409, { error: 'script “host check” runs on the host, not in a guest' }],
    ['a stopped guest', () => request(101), 409, { error: 'guest is not running (stopped)' }],
    ['a locked guest', () => request(201), 409, { error: 'guest is locked (backup)' }],
    ['a template', () => request(9000), 409, { error: 'guest is a template' }],
    ['timeout_s 0', () => request(200, guestScript, 0), 400, { errors: [{ field: 'timeout_s', message: 'must be a whole number from 1 to 3600' }] }],
    ['timeout_s 3601', () => request(200, guestScript, 3601), 400, { errors: [{ field: 'timeout_s', message: 'must be a whole number from 1 to 3600' }] }],
  ])('refuses %s, queuing nothing', async (_what, call, status, body) => {
    expect(refusal(call)).toEqual({ status, body });
    expect((await server.client.get('/api/operations')).body).toEqual([]);
  });

  it('refuses a second run in a guest with an open operation, and an offline host', async () => {
    request(200);
    expect(refusal(() => request(200))).toEqual({ status: 409, body: { error: 'an operation is already pending for this guest' } });
    expect((await server.client.post(`/api/hosts/${host.host_id}/guests/200/actions`, { action: 'reboot' })).status).toBe(409);
    clock.advance(10 * 60 * 1000);
    expect(refusal(() => request(100))).toEqual({ status: 409, body: { error: 'host is offline' } });
  });

  it("joins the caller's transaction: rolled back with it, nothing is queued or audited", async () => {
    const entries = (await server.client.get('/api/audit?limit=1000')).body.length;
    const campaign = server.context.transaction(() => {
      request(200);
      request(100);
      throw new Error('the campaign failed after queuing');
    });
    expect(() => campaign()).toThrow('the campaign failed');
    expect((await server.client.get('/api/operations')).body).toEqual([]);
    expect((await server.client.get('/api/audit?limit=1000')).body).toHaveLength(entries);
  });

  it('is audited with the script by name, hash and size, never its body', async () => {
    const { operation_id } = request(200);
    const entry = ((await server.client.get('/api/audit?limit=1000')).body as AuditEntry[]).find((e) => e.action === 'host.script_run')!;
    expect(entry).toMatchObject({
      subject: { type: 'guest', id: `${host.host_id}/200`, name: 'db' },
      detail: { host: 'pve1', vmid: 200, operation_id, script_id: guestScript, script_name: 'patch', timeout_s: 300, sha256: sha(BODY), size: Buffer.byteLength(BODY) },
    });
    expect(JSON.stringify(entry)).not.toContain('apt-get');
  });
});

describe('allows_scripts', () => {
  it('is what the last heartbeat said (false when it says nothing), shown on the host', async () => {
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.allows_scripts).toBe(false);
    expect((await heartbeat(server, host.host_token, { guests: GUESTS, allows_scripts: true })).status).toBe(200);
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.allows_scripts).toBe(true);
    expect((await server.client.get('/api/hosts')).body[0].allows_scripts).toBe(true);
    const bad = await heartbeat(server, host.host_token, { guests: GUESTS, allows_scripts: 'yes' });
    expect(bad).toMatchObject({ status: 400, body: { errors: [{ field: 'allows_scripts', message: 'must be true or false' }] } });
    clock.advance(60_000);
    expect((await heartbeat(server, host.host_token, { guests: GUESTS })).status).toBe(200);
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.allows_scripts).toBe(false);
  });
});
