import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { json, startMockRemote, type MockRemote } from '../../test/helpers/remote.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { openStream, type SseStream } from '../../test/helpers/sse.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import type { AppOptions } from '../app.js';
import { agentDir, enrolledHost, heartbeat } from '../../test/helpers/hosts.js';
import type { Role } from '../contract/access.js';
import type { TestClient } from '../../test/helpers/http.js';

// Short intervals so the 15-second rules are tested in a fraction of a second.
const KEEP_ALIVE_MS = 100;
const RECHECK_MS = 150;
const MARGIN_MS = 1_000;

const servers: TestServer[] = [];
const streams: SseStream[] = [];
const remotes: MockRemote[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  for (const s of servers.splice(0)) await s.stop();
  for (const r of remotes.splice(0)) await r.close();
  removeTempDbs();
});

async function start(options: AppOptions = {}) {
  const server = await startServer({ ...options, liveEvents: { keepAliveMs: KEEP_ALIVE_MS, recheckMs: RECHECK_MS, ...options.liveEvents } });
  servers.push(server);
  return server;
}
async function open(...args: Parameters<typeof openStream>) {
  const stream = await openStream(...args);
  streams.push(stream);
  return stream;
}
const connected = (s: SseStream) => s.waitFor((f) => f.comment === 'connected');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** An event id's number within its run (`<run>-<n>`). */
const numberOf = (id: string | undefined) => Number(/^[0-9a-f]{8}-(\d+)$/.exec(id ?? '')?.[1]);

describe('GET /api/events', () => {
  it('is declared for fleet.read and answers 401 without a session', async () => {
    const server = await start();
    expect(server.routes.find((r) => r.path === '/api/events')).toMatchObject({ method: 'GET', access: 'fleet.read', activity: false });
    const stream = await open(server.anonymous());
    expect(stream.status).toBe(401);
  });

  it('sends ": connected" at once, the stream headers, no compression, and a comment every interval', async () => {
    const server = await start();
    const stream = await open(server.client, '/api/events', { 'accept-encoding': 'gzip, deflate, br' });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['cache-control']).toBe('no-store, no-transform');
    expect(stream.headers['x-accel-buffering']).toBe('no');
    expect(stream.headers['content-encoding']).toBeUndefined();
    const first = await connected(stream);
    expect(stream.raw.startsWith(': connected\n\n')).toBe(true);
    expect(first.at).toBeLessThan(500);
    // Three comments, each within an interval and a margin of the one before: a sleep of three
    // intervals counted two on a loaded machine, where a timer can come a few hundred ms late.
    let comments = 0;
    await stream.waitFor((f) => f.comment === 'keep-alive' && ++comments === 3, 3 * (KEEP_ALIVE_MS + MARGIN_MS));
    expect(comments).toBe(3);
  });

  it('delivers instance.created, instance.updated and instance.deleted with increasing ids', async () => {
    const server = await start();
    const stream = await open(server.client);
    await connected(stream);
    const body = buildInstance({ name: 'live-one' });
    expect((await server.client.post('/api/instances', body)).status).toBe(201);
    expect((await server.client.put(`/api/instances/${body.vmid}`, { name: 'live-two' })).status).toBe(200);
    expect((await server.client.delete(`/api/instances/${body.vmid}`)).status).toBe(204);
    await stream.waitFor((f) => f.event === 'instance.deleted');
    const created = stream.data('instance.created')[0];
    expect(created.instance).toMatchObject({ vmid: body.vmid, name: 'live-one' });
    expect(stream.data('instance.updated')[0]).toMatchObject({ instance: { vmid: body.vmid, name: 'live-two' }, changed: ['name'], previous_vmid: body.vmid });
    expect(stream.data('instance.deleted')[0]).toEqual({ vmid: body.vmid });
    const frames = stream.frames.filter((f) => f.event.startsWith('instance.'));
    // `<run>-<n>`: one run, its numbers increasing.
    expect(new Set(frames.map((f) => f.id!.split('-')[0])).size).toBe(1);
    const ids = frames.map((f) => numberOf(f.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(3);
  });

  it('delivers job.run.started and job.run.finished for a run against a remote', async () => {
    const remote = await startMockRemote(json(200, { devices: [] }));
    remotes.push(remote);
    const server = await start({ dbPath: tempDbPath() });
    const job = (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === 'tailscale_sync');
    await server.client.put(`/api/jobs/${job.id}`, { config: { api_key: 'k', api_url: remote.url } });
    const viewer = await server.signIn('viewer');
    const stream = await open(viewer);
    await connected(stream);
    expect((await server.client.post(`/api/jobs/${job.id}/run`)).status).toBe(200);
    const finished = await stream.waitFor((f) => f.event === 'job.run.finished');
    const [started] = stream.data('job.run.started');
    expect(started).toMatchObject({ job_id: job.id, job_key: 'tailscale_sync', status: 'running', ended_at: null });
    expect(JSON.parse(finished.data!)).toMatchObject({ job_id: job.id, run_id: started.run_id, status: 'success', result: 'Updated 0 of 0 instances' });
    expect(stream.raw).not.toContain('"k"');
  });

  it('announces the instances a job run changed, after its transaction commits, and never a rolled-back change', async () => {
    const remote = await startMockRemote(json(200, { devices: [{ hostname: 'synced', addresses: ['100.64.1.2'] }] }));
    remotes.push(remote);
    const server = await start({ dbPath: tempDbPath() });
    const body = buildInstance({ name: 'synced' });
    await server.client.post('/api/instances', body);
    const job = (await server.client.get('/api/jobs')).body.find((j: { key: string }) => j.key === 'tailscale_sync');
    await server.client.put(`/api/jobs/${job.id}`, { config: { api_key: 'k', api_url: remote.url } });
    const stream = await open(server.client);
    await connected(stream);
    expect((await server.client.post(`/api/jobs/${job.id}/run`)).body).toEqual({ summary: 'Updated 1 of 1 instances' });
    await stream.waitFor((f) => f.event === 'job.run.finished');
    expect(stream.data('instance.updated')).toEqual([
      expect.objectContaining({ instance: expect.objectContaining({ vmid: body.vmid, tailscale: 1, tailscale_ip: '100.64.1.2' }), changed: ['tailscale_ip', 'tailscale'] }),
    ]);
    const [updated, finished] = stream.frames.filter((f) => f.event === 'instance.updated' || f.event === 'job.run.finished');
    expect(numberOf(updated!.id)).toBeLessThan(numberOf(finished!.id));

    const seen: unknown[] = [];
    server.context.bus.on('instance.updated', (payload) => seen.push(payload));
    const rollback = server.context.transaction(() => {
      server.instances.update(body.vmid as number, { name: 'never-committed' });
      throw new Error('roll back');
    });
    expect(() => rollback()).toThrow('roll back');
    expect(seen).toEqual([]);
    expect((await server.client.get(`/api/instances/${body.vmid}`)).body.name).toBe('synced');
  });

  it('delivers usage.report for a start report and its update: whole to operators, a summary to viewers', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer');
    const operator = await server.signIn('operator');
    const [viewerStream, operatorStream] = [await open(viewer), await open(operator)];
    await Promise.all([connected(viewerStream), connected(operatorStream)]);
    const random_id = '0b6c6a52-2f55-4a43-9a1e-4f2e8a9f1c11';
    const anon = server.anonymous();
    expect((await anon.post('/api/usage/upload', { type: 'lxc', nsapp: 'jellyfin', status: 'installing', random_id, disk_size: 8 })).status).toBe(201);
    expect((await anon.post('/api/usage/upload/updatestatus', { random_id, status: 'failed', error: 'disk full' })).status).toBe(200);
    await operatorStream.waitFor((f) => f.event === 'usage.report' && f.data!.includes('"failed"'));
    await viewerStream.waitFor((f) => f.event === 'usage.report' && f.data!.includes('"failed"'));
    expect(operatorStream.data('usage.report').map((r) => [r.random_id, r.nsapp, r.status, r.error, r.disk_size])).toEqual([
      [random_id, 'jellyfin', 'installing', null, 8],
      [random_id, 'jellyfin', 'failed', 'disk full', 8],
    ]);
    // content.read is "read summaries": the viewer's charts count these, the report's fields stay with content.manage.
    expect(viewerStream.data('usage.report')).toEqual([
      { id: 1, nsapp: 'jellyfin', status: 'installing', type: 'lxc', created_at: expect.any(String), updated_at: expect.any(String) },
      { id: 1, nsapp: 'jellyfin', status: 'failed', type: 'lxc', created_at: expect.any(String), updated_at: expect.any(String) },
    ]);
    expect(viewerStream.raw).not.toContain(random_id);
    expect(viewerStream.raw).not.toContain('disk full');
  });

  it('a viewer never receives audit.entry; an administrator does', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer');
    const viewerStream = await open(viewer);
    const adminStream = await open(server.client);
    await Promise.all([connected(viewerStream), connected(adminStream)]);
    await server.client.post('/api/instances', buildInstance());
    await server.client.post('/api/users', { username: 'audit-target', display_name: 'A', role: 'viewer' });
    await adminStream.waitFor((f) => f.event === 'audit.entry' && f.data!.includes('user.create'));
    await viewerStream.waitFor((f) => f.event === 'instance.created');
    await sleep(100);
    expect(adminStream.data('audit.entry').map((e) => e.action)).toEqual(expect.arrayContaining(['request', 'user.create']));
    expect(viewerStream.frames.filter((f) => f.event === 'audit.entry')).toEqual([]);
    expect(viewerStream.raw).not.toContain('audit');
  });
});

describe('hosts', () => {
  it('forwards host.heartbeat and host.status (hosts.read) from an enrolled host, to a viewer and to a token', async () => {
    const server = await start({ config: { agentAllowHttp: true }, hosts: { agentDir: agentDir() } });
    const viewer = await server.signIn('viewer');
    const stream = await open(viewer);
    const { token } = (await viewer.post('/api/tokens', { name: 'hosts', role: 'viewer' })).body as { token: string };
    const scripted = await open(server.anonymous(), '/api/events', { authorization: `Bearer ${token}` });
    await Promise.all([connected(stream), connected(scripted)]);
    const host = await enrolledHost(server, { hostname: 'pve-stream' });
    const guests = [{ vmid: 7301, name: 'g', type: 'lxc', status: 'running' }];
    expect((await heartbeat(server, host.host_token, { hostname: 'pve-stream', guests })).status).toBe(200);
    for (const s of [stream, scripted]) {
      const beat = await s.waitFor((f) => f.event === 'host.heartbeat');
      expect(JSON.parse(beat.data!)).toMatchObject({ id: host.host_id, hostname: 'pve-stream', status: 'online', agent_version: '1.0.0' });
      const status = await s.waitFor((f) => f.event === 'host.status' && JSON.parse(f.data!).status === 'online');
      expect(JSON.parse(status.data!).id).toBe(host.host_id);
    }
  });
  it("sends an administrator the audit entries of host actions (enrollment tokens, host edits)", async () => {
    const server = await start({ config: { agentAllowHttp: true }, hosts: { agentDir: agentDir() } });
    const stream = await open(server.client);
    await connected(stream);
    const host = await enrolledHost(server, { hostname: 'pve-audit' });
    expect((await server.client.patch(`/api/hosts/${host.host_id}`, { sync_registry: true })).status).toBe(200);
    await stream.waitFor((f) => f.event === 'audit.entry' && JSON.parse(f.data!).action === 'host.update');
    const actions = stream.data('audit.entry').map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['enrollment_token.create', 'host.update']));
    // The live entries are the stored ones: same ids, same words.
    const stored = (await server.client.get('/api/audit?limit=50')).body as { id: number; action: string }[];
    for (const entry of stream.data('audit.entry')) expect(stored).toContainEqual(expect.objectContaining({ id: entry.id, action: entry.action }));
  });
});

describe('revocation', () => {
  async function revokedWithin(stream: SseStream, ms: number) {
    const t0 = Date.now();
    const frame = await stream.waitFor((f) => f.event === 'revoked', ms);
    await stream.ended;
    return { reason: JSON.parse(frame.data!).reason as string, ms: Date.now() - t0 };
  }

  it('logout ends the stream at once with event: revoked, and a reconnect gets 401', async () => {
    const server = await start({ liveEvents: { recheckMs: 60_000 } });
    const operator = await server.signIn('operator');
    const stream = await open(operator);
    await connected(stream);
    const cookie = operator.cookieHeader();
    expect((await operator.post('/api/auth/logout')).status).toBe(204);
    const { reason, ms } = await revokedWithin(stream, MARGIN_MS);
    expect(reason).toBe('signed out');
    expect(ms).toBeLessThan(MARGIN_MS);
    const again = server.anonymous();
    again.setCookie(cookie.split('=')[0]!, cookie.split('=').slice(1).join('='));
    expect((await open(again)).status).toBe(401);
  });

  it.each([
    ['revoke-sessions', 'sessions revoked by an administrator', (s: TestServer, id: number) => s.client.post(`/api/users/${id}/revoke-sessions`)],
    ['a disable', 'account disabled', (s: TestServer, id: number) => s.client.patch(`/api/users/${id}`, { enabled: false })],
    ['a password reset', 'password reset by an administrator', (s: TestServer, id: number) => s.client.post(`/api/users/${id}/reset-password`)],
    ['a role change', 'role changed', (s: TestServer, id: number) => s.client.patch(`/api/users/${id}`, { role: 'viewer' })],
  ])('%s ends the stream with the reason within the interval', async (_name, reason, act) => {
    const server = await start();
    const operator = await server.signIn('operator');
    const id = (await operator.get('/api/auth/session')).body.user.id;
    const stream = await open(operator);
    await connected(stream);
    expect((await act(server, id)).status).toBeLessThan(300);
    const result = await revokedWithin(stream, RECHECK_MS + MARGIN_MS);
    expect(result.reason).toBe(reason);
  });

  it('the periodic re-check catches a change no revocation announced (account disabled in the database)', async () => {
    const server = await start();
    const operator = await server.signIn('operator');
    const stream = await open(operator);
    await connected(stream);
    server.db.prepare("UPDATE accounts SET enabled = 0 WHERE role = 'operator'").run();
    const result = await revokedWithin(stream, RECHECK_MS + MARGIN_MS);
    expect(result.reason).toBe('account disabled');
  });

  it('a lowered role stops receiving audit.entry, even the entry of its own demotion', async () => {
    const server = await start();
    const second = await server.signIn('administrator');
    const id = (await second.get('/api/auth/session')).body.user.id;
    const stream = await open(second);
    await connected(stream);
    await server.client.post('/api/instances', buildInstance());
    await stream.waitFor((f) => f.event === 'audit.entry');
    const before = stream.data('audit.entry').length;
    expect((await server.client.patch(`/api/users/${id}`, { role: 'viewer' })).status).toBe(200);
    const result = await revokedWithin(stream, RECHECK_MS + MARGIN_MS);
    expect(result.reason).toBe('role changed');
    expect(stream.data('audit.entry').length).toBe(before);
    expect(stream.raw).not.toContain('user.update');
  });

  it("ends with 'session expired' at the idle timeout, and the stream itself does not extend it", async () => {
    const clock = manualClock();
    const server = await start({ clock });
    const viewer = await server.signIn('viewer');
    clock.advance(5 * 60_000);
    // Opened 5 minutes after the last request: a request that counted as activity would move idle expiry to 35 min.
    const stream = await open(viewer);
    await connected(stream);
    clock.advance(20 * 60_000);
    await sleep(RECHECK_MS * 3);
    expect(stream.isEnded()).toBe(false);
    clock.advance(5 * 60_000 + 1_000); // 30 min and 1 s after the login
    const result = await revokedWithin(stream, RECHECK_MS + MARGIN_MS);
    expect(result.reason).toBe('session expired');
    expect((await viewer.get('/api/auth/session')).status).toBe(401);
  });

  it('ends at the 12-hour absolute expiry while the person stays active', async () => {
    const clock = manualClock();
    const server = await start({ clock });
    const viewer = await server.signIn('viewer');
    const stream = await open(viewer);
    await connected(stream);
    for (let step = 1; step < 36; step++) {
      clock.advance(20 * 60_000); // a request every 20 minutes keeps the idle timeout away
      expect((await viewer.get('/api/auth/session')).status).toBe(200);
    }
    expect(stream.isEnded()).toBe(false);
    clock.advance(20 * 60_000 + 1_000);
    const result = await revokedWithin(stream, RECHECK_MS + MARGIN_MS);
    expect(result.reason).toBe('session expired');
  });
});

describe('replay, caps and shutdown', () => {
  it('Last-Event-ID replays the missed events the role may see, in order', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer');
    const first = await open(viewer);
    await connected(first);
    await server.client.post('/api/instances', buildInstance({ name: 'seen' }));
    const seen = await first.waitFor((f) => f.event === 'instance.created');
    first.close();
    await server.client.post('/api/instances', buildInstance({ name: 'missed-1' }));
    await server.client.post('/api/instances', buildInstance({ name: 'missed-2' }));
    const again = await open(viewer, '/api/events', { 'last-event-id': seen.id! });
    await again.waitFor((f) => f.data?.includes('missed-2') ?? false);
    expect(again.data('instance.created').map((e) => e.instance.name)).toEqual(['missed-1', 'missed-2']);
    expect(again.frames.some((f) => f.event === 'audit.entry')).toBe(false);
    expect(again.frames.some((f) => f.event === 'reset')).toBe(false);
  });

  it('says event: reset instead of replaying more than a stream may have queued, which would drop it mid-replay', async () => {
    const server = await start({ liveEvents: { maxQueuedBytes: 2048 } });
    const before = await open(server.client);
    await connected(before);
    await server.client.post('/api/instances', buildInstance({ name: 'seen' }));
    const seen = await before.waitFor((f) => f.event === 'instance.created');
    before.close();
    for (let i = 0; i < 10; i++) await server.client.post('/api/instances', buildInstance({ name: `missed-${i}-${'x'.repeat(150)}` }));
    const again = await open(server.client, '/api/events', { 'last-event-id': seen.id! });
    await again.waitFor((f) => f.event === 'reset');
    expect(again.frames.filter((f) => f.event === 'instance.created')).toEqual([]);
    expect(again.isEnded()).toBe(false);
  });

  it('says event: reset when the buffer no longer reaches back, or the id is unknown', async () => {
    const server = await start({ liveEvents: { bufferSize: 3 } });
    for (let i = 0; i < 6; i++) await server.client.post('/api/instances', buildInstance());
    const old = await open(server.client, '/api/events', { 'last-event-id': '1' });
    const reset = await old.waitFor((f) => f.event === 'reset');
    expect(JSON.parse(reset.data!).reason).toBeTruthy();
    expect(old.frames.filter((f) => f.event === 'instance.created')).toEqual([]);
    const future = await open(server.client, '/api/events', { 'last-event-id': '999999' });
    await future.waitFor((f) => f.event === 'reset');
    const garbage = await open(server.client, '/api/events', { 'last-event-id': 'abc' });
    await garbage.waitFor((f) => f.event === 'reset');
    // The reset carries the newest id, so the browser's next reconnect replays from there.
    const resume = await open(server.client, '/api/events', { 'last-event-id': reset.id! });
    await connected(resume);
    await sleep(50);
    expect(resume.frames.some((f) => f.event === 'reset')).toBe(false);
  });

  it('says event: reset to an id of an earlier run, whatever number this run has reached since', async () => {
    const before = await start();
    const stream = await open(before.client);
    await connected(stream);
    await before.client.post('/api/instances', buildInstance({ name: 'before-the-restart' }));
    const seen = await stream.waitFor((f) => f.event === 'instance.created');
    stream.close();
    // The server started again: its events are numbered from 1 again, and pass the one the browser saw.
    const after = await start();
    for (let i = 0; i < 3; i++) await after.client.post('/api/instances', buildInstance({ name: `after-${i}` }));
    const again = await open(after.client, '/api/events', { 'last-event-id': seen.id! });
    await again.waitFor((f) => f.event === 'reset');
    expect(again.frames.filter((f) => f.event === 'instance.created')).toEqual([]);
  });

  it('keeps at most bufferBytes of events for replay: a Last-Event-ID older than that gets reset, a recent one its events', async () => {
    const server = await start({ liveEvents: { bufferBytes: 4096 } });
    const ids: string[] = [];
    const stream = await open(server.client);
    await connected(stream);
    for (let i = 0; i < 20; i++) {
      await server.client.post('/api/instances', buildInstance({ name: `big-${i}-${'x'.repeat(150)}` }));
      ids.push((await stream.waitFor((f) => f.event === 'instance.created' && f.data!.includes(`big-${i}-`))).id!);
    }
    stream.close();
    const old = await open(server.client, '/api/events', { 'last-event-id': ids[2]! });
    await old.waitFor((f) => f.event === 'reset');
    expect(old.frames.filter((f) => f.event === 'instance.created')).toEqual([]);
    const recent = await open(server.client, '/api/events', { 'last-event-id': ids[17]! });
    await recent.waitFor((f) => f.event === 'instance.created' && f.data!.includes('big-19-'));
    expect(recent.frames.filter((f) => f.event === 'instance.created')).toHaveLength(2);
    expect(recent.frames.some((f) => f.event === 'reset')).toBe(false);
  });

  it('tells open streams to reload (event: reset) when a backup import replaced everything', async () => {
    const server = await start();
    const stream = await open(server.client);
    await connected(stream);
    expect((await server.client.post('/api/import', { version: 3, instances: [buildInstance()] })).status).toBe(200);
    const reset = await stream.waitFor((f) => f.event === 'reset');
    expect(JSON.parse(reset.data!)).toEqual({ reason: 'a backup was imported' });
  });

  it('caps streams per session at 5, also when opened in parallel; closing one frees a slot', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer');
    const opened = await Promise.all(Array.from({ length: 8 }, () => open(viewer)));
    const statuses = opened.map((s) => s.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const refused = opened.find((s) => s.status === 429)!;
    await refused.ended;
    expect(JSON.parse(refused.raw)).toEqual({ error: 'too many event streams' });
    // Another session has its own slots.
    expect((await open(server.client)).status).toBe(200);
    opened.find((s) => s.status === 200)!.close();
    const deadline = Date.now() + 2_000;
    let next = await open(viewer);
    while (next.status !== 200 && Date.now() < deadline) {
      await sleep(20);
      next = await open(viewer);
    }
    expect(next.status).toBe(200);
  });

  it('bounds the total number of streams', async () => {
    const server = await start({ liveEvents: { maxStreams: 3 } });
    const a = await server.signIn('viewer');
    const b = await server.signIn('viewer');
    expect((await Promise.all([open(a), open(a), open(b)])).map((s) => s.status)).toEqual([200, 200, 200]);
    const over = await open(b);
    expect(over.status).toBe(503);
  });

  it('drops a client that stops reading once too much is queued for it, so memory stays bounded', async () => {
    const server = await start({ liveEvents: { maxQueuedBytes: 256 * 1024 } });
    const viewer = await server.signIn('viewer');
    const stuck = await new Promise<http.IncomingMessage>((resolve) => {
      http.get(`${server.baseUrl}/api/events`, { headers: { cookie: viewer.cookieHeader() } }, (res) => {
        res.pause(); // never reads: the kernel's buffers fill, then Node's
        resolve(res);
      });
    });
    expect(stuck.statusCode).toBe(200);
    const reading = await open(server.client);
    await connected(reading);
    expect(server.liveEvents.size).toBe(2);
    const big = 'x'.repeat(100 * 1024);
    for (let i = 0; i < 200 && server.liveEvents.size > 1; i++) {
      server.liveEvents.publish('instance.deleted', { vmid: i, pad: big });
      await sleep(1);
    }
    expect(server.liveEvents.size).toBe(1);
    expect(reading.isEnded()).toBe(false);
    stuck.destroy();
  });

  it('closing the app ends every stream cleanly, so the HTTP server closes without waiting', async () => {
    const server = await start();
    const stream = await open(server.client);
    await connected(stream);
    server.liveEvents.close();
    await stream.ended;
    expect(stream.isEnded()).toBe(true);
    expect(server.liveEvents.size).toBe(0);
    expect((await open(server.client)).status).toBe(503);
  });
});

describe('a personal API token (Authorization: Bearer hfp_…)', () => {
  /** Creates a token through the API as `client` (a signed-in browser) and returns the 201 body. */
  async function createToken(client: TestClient, role: Role, extra: Record<string, unknown> = {}) {
    const res = await client.post('/api/tokens', { name: `${role} stream`, role, ...extra });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: number; token: string };
  }
  /** A script's stream: no cookie, only the bearer token. */
  const openWithToken = (server: TestServer, token: string, headers: Record<string, string> = {}) =>
    open(server.anonymous(), '/api/events', { authorization: `Bearer ${token}`, ...headers });
  async function revokedWithin(stream: SseStream, ms: number) {
    const t0 = Date.now();
    const frame = await stream.waitFor((f) => f.event === 'revoked', ms);
    await stream.ended;
    return { reason: JSON.parse(frame.data!).reason as string, ms: Date.now() - t0 };
  }

  it('opens the stream without a cookie and receives the events its role may see', async () => {
    const server = await start();
    const { token } = await createToken(server.client, 'viewer');
    const stream = await openWithToken(server, token);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers['cache-control']).toBe('no-store, no-transform');
    await connected(stream);
    await server.client.post('/api/instances', buildInstance({ name: 'seen-by-token' }));
    const created = await stream.waitFor((f) => f.event === 'instance.created');
    expect(JSON.parse(created.data!).instance.name).toBe('seen-by-token');
    expect((await openWithToken(server, 'hfp_' + 'A'.repeat(43))).status).toBe(401);
  });

  it("is capped at min(token role, owner's role): an administrator's operator token never sees audit.entry", async () => {
    const server = await start();
    const operatorToken = await createToken(server.client, 'operator');
    const adminToken = await createToken(server.client, 'administrator');
    const capped = await openWithToken(server, operatorToken.token);
    const full = await openWithToken(server, adminToken.token);
    await Promise.all([connected(capped), connected(full)]);
    await server.client.post('/api/instances', buildInstance());
    await full.waitFor((f) => f.event === 'audit.entry');
    await capped.waitFor((f) => f.event === 'instance.created');
    await sleep(100);
    expect(capped.frames.filter((f) => f.event === 'audit.entry')).toEqual([]);
    expect(capped.raw).not.toContain('audit');
  });

  it('DELETE /api/tokens/:id ends its streams at once with event: revoked; a reconnect gets 401', async () => {
    const server = await start({ liveEvents: { recheckMs: 60_000 } });
    const operator = await server.signIn('operator');
    const revoked = await createToken(operator, 'viewer');
    const kept = await createToken(operator, 'viewer');
    const stream = await openWithToken(server, revoked.token);
    const other = await openWithToken(server, kept.token);
    const browser = await open(operator);
    await Promise.all([connected(stream), connected(other), connected(browser)]);
    expect((await operator.delete(`/api/tokens/${revoked.id}`)).status).toBe(204);
    const { reason, ms } = await revokedWithin(stream, MARGIN_MS);
    expect(reason).toBe('token revoked');
    expect(ms).toBeLessThan(MARGIN_MS);
    expect((await openWithToken(server, revoked.token)).status).toBe(401);
    // The owner's other token and session go on.
    await server.client.post('/api/instances', buildInstance({ name: 'after-revoke' }));
    await other.waitFor((f) => f.event === 'instance.created');
    await browser.waitFor((f) => f.event === 'instance.created');
    expect(other.isEnded()).toBe(false);
    expect(browser.isEnded()).toBe(false);
  });

  it('ends with "token expired" at the expiry, found by the periodic re-check', async () => {
    const clock = manualClock(Date.parse('2026-11-22T10:00:00.000Z'));
    const server = await start({ clock });
    const { token } = await createToken(server.client, 'viewer', { expires_at: '2026-11-22T10:20:00Z' });
    const stream = await openWithToken(server, token);
    await connected(stream);
    clock.set(Date.parse('2026-11-22T10:19:59.000Z'));
    await sleep(RECHECK_MS * 3);
    expect(stream.isEnded()).toBe(false);
    clock.set(Date.parse('2026-11-22T10:20:00.000Z'));
    expect((await revokedWithin(stream, RECHECK_MS + MARGIN_MS)).reason).toBe('token expired');
  });

  it('ends with "account disabled" when the owner is disabled, even behind the API (database)', async () => {
    const server = await start();
    const operator = await server.signIn('operator', 'olga');
    const viaApi = await openWithToken(server, (await createToken(operator, 'viewer')).token);
    await connected(viaApi);
    const olga = server.accounts.repo.byUsername('olga')!;
    expect((await server.client.patch(`/api/users/${olga.id}`, { enabled: false })).status).toBe(200);
    expect((await revokedWithin(viaApi, RECHECK_MS + MARGIN_MS)).reason).toBe('account disabled');

    const other = await server.signIn('operator', 'oscar');
    const viaDb = await openWithToken(server, (await createToken(other, 'viewer')).token);
    await connected(viaDb);
    server.db.prepare("UPDATE accounts SET enabled = 0 WHERE username = 'oscar'").run();
    expect((await revokedWithin(viaDb, RECHECK_MS + MARGIN_MS)).reason).toBe('account disabled');
  });

  it("a lowered owner role stops the token's stream before it sees what it may no longer see", async () => {
    const server = await start();
    const second = await server.signIn('administrator', 'ada');
    const id = server.accounts.repo.byUsername('ada')!.id;
    const stream = await openWithToken(server, (await createToken(second, 'administrator')).token);
    await connected(stream);
    await server.client.post('/api/instances', buildInstance());
    await stream.waitFor((f) => f.event === 'audit.entry');
    const before = stream.data('audit.entry').length;
    expect((await server.client.patch(`/api/users/${id}`, { role: 'viewer' })).status).toBe(200);
    expect((await revokedWithin(stream, RECHECK_MS + MARGIN_MS)).reason).toBe('role changed');
    expect(stream.data('audit.entry').length).toBe(before);
    expect(stream.raw).not.toContain('user.update');
  });

  it("a role change that leaves min(token role, owner's role) as it was keeps the stream open", async () => {
    const server = await start();
    await server.signIn('administrator', 'ada');
    const ada = await server.signIn('administrator', 'ada2');
    const id = server.accounts.repo.byUsername('ada2')!.id;
    const stream = await openWithToken(server, (await createToken(ada, 'viewer')).token);
    await connected(stream);
    expect((await server.client.patch(`/api/users/${id}`, { role: 'operator' })).status).toBe(200);
    await sleep(RECHECK_MS * 3);
    expect(stream.isEnded()).toBe(false);
    await server.client.post('/api/instances', buildInstance({ name: 'still-here' }));
    await stream.waitFor((f) => f.event === 'instance.created');
  });

  it('caps streams per token at 5, in parallel too; another token of the same owner has its own slots', async () => {
    const server = await start();
    const viewer = await server.signIn('viewer');
    const first = await createToken(viewer, 'viewer');
    const second = await createToken(viewer, 'viewer');
    const opened = await Promise.all(Array.from({ length: 8 }, () => openWithToken(server, first.token)));
    expect(opened.map((s) => s.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    const refused = opened.find((s) => s.status === 429)!;
    await refused.ended;
    expect(JSON.parse(refused.raw)).toEqual({ error: 'too many event streams' });
    expect((await openWithToken(server, second.token)).status).toBe(200);
    expect((await open(viewer)).status).toBe(200);
    opened.find((s) => s.status === 200)!.close();
    const deadline = Date.now() + 2_000;
    let next = await openWithToken(server, first.token);
    while (next.status !== 200 && Date.now() < deadline) {
      await sleep(20);
      next = await openWithToken(server, first.token);
    }
    expect(next.status).toBe(200);
  });
});
