import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { bearer, enrolledHost, heartbeat, heldPosts, startHostServer, type Enrolled } from '../../test/helpers/hosts.js';
import type { TestClient } from '../../test/helpers/http.js';
import type { TestServer } from '../../test/helpers/server.js';
import { openStream } from '../../test/helpers/sse.js';
import type { AuditEntry } from '../audit.js';

// PRODUCT.md "Guest control through agents": POST /api/hosts/:id/guests/:vmid/actions, its statuses
// and rules, the operations it makes, and DELETE /api/operations/:id.

const GUESTS = [
  { vmid: 100, name: 'web', type: 'qemu', status: 'running' },
  { vmid: 101, name: 'build', type: 'qemu', status: 'stopped' },
  { vmid: 200, name: 'db', type: 'lxc', status: 'running' },
  { vmid: 9000, name: 'template', type: 'qemu', status: 'stopped' },
];

let server: TestServer;
let clock: ReturnType<typeof manualClock>;
let host: Enrolled;
beforeEach(async () => {
  clock = manualClock();
  server = await startHostServer({ clock });
  host = await enrolledHost(server);
  expect((await heartbeat(server, host.host_token, { guests: GUESTS })).status).toBe(200);
});
afterEach(() => server.stop());

const act = (vmid: number, body: unknown, client: TestClient = server.client, hostId = host.host_id) =>
  client.post(`/api/hosts/${hostId}/guests/${vmid}/actions`, body);
const operation = async (id: string) => (await server.client.get(`/api/operations/${id}`)).body;
const audit = async (): Promise<AuditEntry[]> => (await server.client.get('/api/audit?limit=1000')).body;
/** The agent takes what is due (a poll that does not wait) and reports `exit_code`. */
async function runByAgent(exitCode: number, output = '') {
  const polled = await server.anonymous().get('/api/agent/commands?wait=0', bearer(host.host_token));
  for (const command of polled.body?.commands ?? []) {
    const res = await server.anonymous().post(`/api/agent/operations/${command.operation_id}/result`, { exit_code: exitCode, output }, bearer(host.host_token));
    expect(res.status).toBe(204);
  }
  return polled.body?.commands ?? [];
}

describe('POST /api/hosts/:id/guests/:vmid/actions', () => {
  it('answers 202 pending, and the operation says who asked, when, and for what; the registry is not changed', async () => {
    await server.client.post('/api/instances', buildInstance({ vmid: 100, name: 'web', state: 'deployed', stack: 'development' }));
    const res = await act(100, { action: 'snapshot', name: 'before-upgrade', reason: 'kernel update' });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ operation_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending' });
    expect(await operation(res.body.operation_id)).toEqual({
      id: res.body.operation_id,
      host_id: host.host_id,
      vmid: 100,
      type: 'guest.action',
      action: 'snapshot',
      status: 'pending',
      params: { guest_type: 'qemu', name: 'before-upgrade' },
      reason: 'kernel update',
      requested_by: 'admin',
      requested_at: '2026-11-22T10:00:00.000Z',
      sent_at: null,
      finished_at: null,
      exit_code: null,
      output: null,
    });
    expect((await runByAgent(0))[0]).toEqual({ type: 'guest.action', operation_id: res.body.operation_id, vmid: 100, guest_type: 'qemu', action: 'snapshot', name: 'before-upgrade' });
    expect((await server.client.get('/api/instances/100')).body).toMatchObject({ state: 'deployed', host: { id: host.host_id, name: 'pve1' }, guest_status: 'running' });
    const [entry] = (await audit()).filter((e) => e.action === 'host.guest_action');
    expect(entry).toMatchObject({
      actor: 'admin',
      subject: { type: 'guest', id: `${host.host_id}/100`, name: 'web' },
      summary: 'admin asked for the snapshot of guest 100 “web” on pve1',
      detail: { host: 'pve1', vmid: 100, action: 'snapshot', name: 'before-upgrade', reason: 'kernel update', operation_id: res.body.operation_id },
    });
  });

  it('refuses an unknown action and bad fields with 400, naming the field; names that reach a shell are refused', async () => {
    const cases: [unknown, string][] = [
      [{ action: 'explode' }, 'action'],
      [{}, 'action'],
      [['stop'], 'body'],
      [{ action: 'snapshot' }, 'name'],
      [{ action: 'snapshot', name: '$(touch /tmp/x)' }, 'name'],
      [{ action: 'snapshot', name: 'a;b' }, 'name'],
      [{ action: 'snapshot', name: `x${'y'.repeat(40)}` }, 'name'],
      [{ action: 'rollback', snapshot: "it's" }, 'snapshot'],
      [{ action: 'clone', new_vmid: 5, name: 'copy' }, 'new_vmid'],
      [{ action: 'clone', new_vmid: 300, name: 'two words' }, 'name'],
      [{ action: 'clone', new_vmid: 300, name: 'x\ny' }, 'name'],
      [{ action: 'stop', reason: 'a\u0007b' }, 'reason'],
      [{ action: 'stop', force: 'yes' }, 'force'],
    ];
    for (const [body, field] of cases) {
      const res = await act(100, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field), JSON.stringify(body)).toContain(field);
    }
    expect((await server.client.get('/api/operations')).body).toEqual([]);
  });

  it('404 for an unknown host or a vmid the last heartbeat did not list; 409 once the host is offline', async () => {
    expect(await act(100, { action: 'start' }, server.client, 999)).toMatchObject({ status: 404, body: { error: 'host not found' } });
    expect(await act(555, { action: 'start' })).toMatchObject({ status: 404, body: { error: 'guest not found' } });
    // Three intervals (30 s) without a heartbeat: offline.
    clock.advance(90_001);
    expect(await act(100, { action: 'start' })).toMatchObject({ status: 409, body: { error: 'host is offline' } });
    await heartbeat(server, host.host_token, { guests: GUESTS.slice(1) });
    expect(await act(100, { action: 'start' })).toMatchObject({ status: 404, body: { error: 'guest not found' } });
    expect((await act(101, { action: 'start' })).status).toBe(202);
  });

  it('a locked guest refuses every action with 409 naming the lock until a heartbeat without it; offline and pending come first', async () => {
    const locked = GUESTS.map((g) => (g.vmid === 100 ? { ...g, lock: 'backup' } : g.vmid === 200 ? { ...g, lock: 'snapshot-delete' } : g));
    expect((await heartbeat(server, host.host_token, { guests: locked })).status).toBe(200);
    expect((await server.client.get(`/api/hosts/${host.host_id}`)).body.guests.find((g: { vmid: number }) => g.vmid === 100)).toMatchObject({ lock: 'backup', template: false });
    for (const body of [{ action: 'start' }, { action: 'stop' }, { action: 'snapshot', name: 'pre' }, { action: 'clone', new_vmid: 150, name: 'copy' }]) {
      expect(await act(100, body), JSON.stringify(body)).toMatchObject({ status: 409, body: { error: 'guest is locked (backup)' } });
    }
    expect(await act(200, { action: 'reboot', force: true })).toMatchObject({ status: 409, body: { error: 'guest is locked (snapshot-delete)' } });
    // The clone refused above left no instance behind.
    expect((await server.client.get('/api/instances/150')).status).toBe(404);
    // A guest with an action pending says so first; an offline host says that first.
    expect((await act(101, { action: 'start' })).status).toBe(202);
    await heartbeat(server, host.host_token, { guests: locked.map((g) => (g.vmid === 101 ? { ...g, lock: 'migrate' } : g)) });
    expect(await act(101, { action: 'start' })).toMatchObject({ status: 409, body: { error: 'an operation is already pending for this guest' } });
    clock.advance(90_001);
    expect(await act(100, { action: 'start' })).toMatchObject({ status: 409, body: { error: 'host is offline' } });
    // The lock clears with the next heartbeat that does not carry it.
    await heartbeat(server, host.host_token, { guests: GUESTS.map((g) => ({ ...g, lock: null })) });
    expect((await act(100, { action: 'start' })).status).toBe(202);
  });

  it('a template is cloned (and may be destroyed) but refuses start, shutdown, stop, reboot, snapshot and rollback with 409', async () => {
    const withTemplate = GUESTS.map((g) => (g.vmid === 9000 ? { ...g, template: 1 } : g));
    expect((await heartbeat(server, host.host_token, { guests: withTemplate })).status).toBe(200);
    const refused = [{ action: 'start' }, { action: 'shutdown' }, { action: 'stop' }, { action: 'reboot' }, { action: 'snapshot', name: 'x' }, { action: 'rollback', snapshot: 'x' }];
    for (const body of refused) expect(await act(9000, { ...body, force: true }), JSON.stringify(body)).toMatchObject({ status: 409, body: { error: 'guest is a template' } });
    const clone = await act(9000, { action: 'clone', new_vmid: 120, name: 'from-template', full: true });
    expect(clone.status, clone.text).toBe(202);
    expect((await runByAgent(0))[0]).toMatchObject({ vmid: 9000, action: 'clone', new_vmid: 120, name: 'from-template', full: true });
    expect((await act(9000, { action: 'destroy', force: true })).status).toBe(202);
  });

  it('one pending operation per guest: parallel requests give exactly one operation, other guests are not held', async () => {
    const { port } = new URL(server.baseUrl);
    const cookie = server.client.cookieHeader();
    const answers = await heldPosts(server.baseUrl, `/api/hosts/${host.host_id}/guests/100/actions`, { cookie, origin: `http://127.0.0.1:${port}` }, Array(8).fill({ action: 'stop' }));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((a) => a.status === 409)) expect(a.body).toEqual({ error: 'an operation is already pending for this guest' });
    expect((await server.client.get(`/api/operations?host_id=${host.host_id}&vmid=100`)).body).toHaveLength(1);
    expect((await act(200, { action: 'stop' })).status).toBe(202);
    // Sent is still pending for this rule; finished is not.
    await server.anonymous().get('/api/agent/commands?wait=0', bearer(host.host_token));
    expect((await act(100, { action: 'start' })).status).toBe(409);
    const [op] = (await server.client.get(`/api/operations?vmid=100`)).body;
    await server.anonymous().post(`/api/agent/operations/${op.id}/result`, { exit_code: 0 }, bearer(host.host_token));
    expect((await act(100, { action: 'start' })).status).toBe(202);
  });

  it('outside the maintenance window: disruptive actions 409 unless an administrator forces them; an operator’s force is 403', async () => {
    // 2026-11-22 10:00 UTC is a Sunday; the window is Saturday nights.
    const put = await server.client.put(`/api/hosts/${host.host_id}/maintenance`, { windows: [{ days: ['sat'], start: '22:00', end: '04:00' }], timezone: 'UTC' });
    expect(put.status, put.text).toBe(200);
    for (const action of ['shutdown', 'stop', 'reboot']) {
      expect(await act(100, { action })).toMatchObject({ status: 409, body: { error: "outside the host's maintenance window" } });
    }
    expect(await act(100, { action: 'rollback', snapshot: 'base' })).toMatchObject({ status: 409 });
    expect(await act(101, { action: 'destroy' })).toMatchObject({ status: 409, body: { error: "outside the host's maintenance window" } });
    // Not disruptive: start, snapshot, clone.
    expect((await act(101, { action: 'start' })).status).toBe(202);
    expect((await act(200, { action: 'snapshot', name: 'nightly' })).status).toBe(202);

    const operator = await server.signIn('operator');
    expect(await act(100, { action: 'stop', force: true }, operator)).toMatchObject({ status: 403 });
    expect((await act(100, { action: 'stop' }, operator)).status).toBe(409);
    const forced = await act(100, { action: 'stop', force: true, reason: 'hung' });
    expect(forced.status, forced.text).toBe(202);
    const [entry] = (await audit()).filter((e) => e.action === 'host.guest_action_forced');
    expect(entry).toMatchObject({ actor: 'admin', summary: 'admin forced the stop of guest 100 “web” on pve1 outside its maintenance window', detail: { force: true, reason: 'hung' } });

    // Inside the window (Saturday 23:00 UTC) no force is needed.
    clock.set(Date.parse('2026-11-28T23:00:00Z'));
    await heartbeat(server, host.host_token, { guests: GUESTS });
    // Six days on, the sessions have expired: sign in again.
    expect((await act(9000, { action: 'reboot' }, await server.signIn('operator'))).status).toBe(202);
  });

  it('destroy: only a stopped guest whose instance is absent or on development; the instance goes when the destroy succeeds', async () => {
    expect(await act(100, { action: 'destroy' })).toMatchObject({ status: 409, body: { error: 'only a stopped guest can be destroyed; web is running' } });
    await server.client.post('/api/instances', buildInstance({ vmid: 101, name: 'build', stack: 'production' }));
    expect(await act(101, { action: 'destroy' })).toMatchObject({ status: 409, body: { error: 'production instances cannot be destroyed; change the stack to development first' } });
    await server.client.put('/api/instances/101', { stack: 'development' });
    const res = await act(101, { action: 'destroy' });
    expect(res.status).toBe(202);
    // A failed destroy leaves the instance.
    await runByAgent(1, 'unable to destroy: locked');
    expect(await operation(res.body.operation_id)).toMatchObject({ status: 'failed', exit_code: 1, output: 'unable to destroy: locked' });
    expect((await server.client.get('/api/instances/101')).status).toBe(200);
    const again = await act(101, { action: 'destroy' });
    await runByAgent(0);
    expect(await operation(again.body.operation_id)).toMatchObject({ status: 'succeeded', exit_code: 0 });
    expect((await server.client.get('/api/instances/101')).status).toBe(404);
    // The instance's own change records its deletion, by the agent; the operation's entry says why.
    expect((await audit()).find((e) => e.subject?.type === 'instance' && e.summary?.includes('deleted'))).toMatchObject({ actor: 'agent:pve1', actor_type: 'agent', subject: { type: 'instance', id: '101', name: 'build' } });
    expect((await audit()).find((e) => e.action === 'host.instance_removed')).toMatchObject({ actor: 'agent:pve1', subject: { type: 'operation', id: again.body.operation_id } });
    // An absent instance is fine too.
    expect((await act(9000, { action: 'destroy' })).status).toBe(202);
  });

  it('clone: the new instance is made with the operation (testing, development), removed when the clone fails, kept when it succeeds', async () => {
    const res = await act(9000, { action: 'clone', new_vmid: 300, name: 'web-copy', full: true });
    expect(res.status, res.text).toBe(202);
    expect((await server.client.get('/api/instances/300')).body).toMatchObject({ vmid: 300, name: 'web-copy', state: 'testing', stack: 'development', host: null });
    expect((await server.client.get('/api/instances/300/history')).body).toEqual([expect.objectContaining({ field: 'created', changed_by: 'admin' })]);
    expect((await act(9000, { action: 'clone', new_vmid: 301, name: 'again' })).status).toBe(409);
    expect((await runByAgent(1, 'clone failed'))[0]).toMatchObject({ action: 'clone', new_vmid: 300, name: 'web-copy', full: true });
    expect((await server.client.get('/api/instances/300')).status).toBe(404);

    // Onto a vmid the registry or the host already has: 409, and no operation, no instance.
    await server.client.post('/api/instances', buildInstance({ vmid: 301, name: 'taken' }));
    expect(await act(9000, { action: 'clone', new_vmid: 301, name: 'copy' })).toMatchObject({ status: 409, body: { error: 'vmid already exists' } });
    expect(await act(9000, { action: 'clone', new_vmid: 200, name: 'copy' })).toMatchObject({ status: 409, body: { error: 'vmid already exists' } });
    // vmids are cluster-wide: one another host reports is taken too.
    const other = await enrolledHost(server, { hostname: 'pve2' });
    await heartbeat(server, other.host_token, { hostname: 'pve2', guests: [{ vmid: 400, name: 'elsewhere', type: 'lxc', status: 'running' }] });
    expect(await act(9000, { action: 'clone', new_vmid: 400, name: 'copy' })).toMatchObject({ status: 409, body: { error: 'vmid already exists' } });
    expect((await server.client.get('/api/operations?vmid=9000')).body).toHaveLength(1);

    const ok = await act(9000, { action: 'clone', new_vmid: 302, name: 'web-copy' });
    await runByAgent(0);
    expect(await operation(ok.body.operation_id)).toMatchObject({ status: 'succeeded' });
    expect((await server.client.get('/api/instances/302')).body).toMatchObject({ name: 'web-copy', state: 'testing' });
  });

  it('viewers may read operations without output; operators see output; only operators act', async () => {
    const res = await act(100, { action: 'stop' });
    await runByAgent(0, 'stopped');
    const viewer = await server.signIn('viewer');
    expect((await act(100, { action: 'start' }, viewer)).status).toBe(403);
    const seen = (await viewer.get(`/api/operations/${res.body.operation_id}`)).body;
    expect(seen).toMatchObject({ status: 'succeeded' });
    expect('output' in seen).toBe(false);
    expect((await viewer.get('/api/operations')).body[0]).not.toHaveProperty('output');
    const operator = await server.signIn('operator');
    expect((await operator.get(`/api/operations/${res.body.operation_id}`)).body.output).toBe('stopped');
    expect((await operator.delete(`/api/operations/${res.body.operation_id}`)).status).toBe(409);
  });
});

describe('GET /api/operations', () => {
  it('filters by host, vmid and status, newest first, with a limit; bad filters are 400', async () => {
    await act(100, { action: 'stop' });
    clock.advance(1000);
    await act(200, { action: 'stop' });
    clock.advance(1000);
    await act(101, { action: 'start' });
    const list = async (q: string) => (await server.client.get(`/api/operations${q}`)).body.map((o: { vmid: number }) => o.vmid);
    expect(await list('')).toEqual([101, 200, 100]);
    expect(await list('?vmid=200')).toEqual([200]);
    expect(await list(`?host_id=${host.host_id}&limit=2`)).toEqual([101, 200]);
    expect(await list('?host_id=999')).toEqual([]);
    expect(await list('?status=pending')).toEqual([101, 200, 100]);
    expect(await list('?status=sent')).toEqual([]);
    for (const q of ['?status=done', '?limit=0', '?limit=1001', '?host_id=abc', '?vmid=-1']) {
      expect((await server.client.get(`/api/operations${q}`)).status, q).toBe(400);
    }
    expect((await server.client.get('/api/operations/no-such-id')).status).toBe(404);
  });
});

describe('DELETE /api/operations/:id', () => {
  it('cancels a pending operation (audited); a sent or ended one is 409; a cancelled clone takes its instance with it', async () => {
    const clone = await act(9000, { action: 'clone', new_vmid: 310, name: 'copy' });
    const operator = await server.signIn('operator');
    expect((await operator.delete(`/api/operations/${clone.body.operation_id}`)).status).toBe(204);
    expect(await operation(clone.body.operation_id)).toMatchObject({ status: 'cancelled', finished_at: '2026-11-22T10:00:00.000Z' });
    expect((await server.client.get('/api/instances/310')).status).toBe(404);
    expect((await audit()).find((e) => e.action === 'host.operation_cancel')).toMatchObject({ summary: expect.stringMatching(/cancelled the clone of guest 9000 on pve1$/) });
    expect(await operator.delete(`/api/operations/${clone.body.operation_id}`)).toMatchObject({ status: 409, body: { error: 'the operation has already ended' } });
    // Nothing reaches the agent.
    expect(await runByAgent(0)).toEqual([]);

    const stop = await act(100, { action: 'stop' });
    await server.anonymous().get('/api/agent/commands?wait=0', bearer(host.host_token));
    expect(await operator.delete(`/api/operations/${stop.body.operation_id}`)).toMatchObject({ status: 409, body: { error: 'the operation was already sent to the agent' } });
    expect((await operator.delete('/api/operations/nothing')).status).toBe(404);
    expect((await (await server.signIn('viewer')).delete(`/api/operations/${stop.body.operation_id}`)).status).toBe(403);

    // A host removal is not cancelled here; an upgrade only by who may ask for one.
    const removal = await server.client.delete(`/api/hosts/${host.host_id}`);
    expect((await operator.delete(`/api/operations/${removal.body.operation_id}`)).status).toBe(409);
  });
});

describe('live', () => {
  it('operation.updated follows an action without its output; a heartbeat moving a guest updates its instance (host, guest_status), not its history', async () => {
    await server.client.post('/api/instances', buildInstance({ vmid: 100, name: 'web' }));
    const viewer = await server.signIn('viewer');
    const stream = await openStream(viewer);
    const { body } = await act(100, { action: 'stop' });
    await runByAgent(0, 'secret output');
    await stream.waitFor((f) => f.event === 'operation.updated' && JSON.parse(f.data!).status === 'succeeded');
    const seen = stream.data('operation.updated').filter((op) => op.id === body.operation_id);
    expect(seen.map((op) => op.status)).toEqual(['pending', 'sent', 'succeeded']);
    expect(seen.every((op) => !('output' in op))).toBe(true);

    await heartbeat(server, host.host_token, { guests: GUESTS.map((g) => (g.vmid === 100 ? { ...g, status: 'stopped' } : g)) });
    const frame = await stream.waitFor((f) => f.event === 'instance.updated');
    expect(JSON.parse(frame.data!)).toMatchObject({ instance: { vmid: 100, host: { id: host.host_id, name: 'pve1' }, guest_status: 'stopped' }, changed: ['guest_status'] });
    expect((await server.client.get('/api/instances/100/history')).body.map((h: { field: string }) => h.field)).toEqual(['created']);
    stream.close();
  });
});
