import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock, type ManualClock } from '../../test/helpers/clock.js';
import { buildInstance } from '../../test/helpers/factories.js';
import { bearer, enrolledHost, heartbeat, startHostServer, type Enrolled } from '../../test/helpers/hosts.js';
import type { TestServer } from '../../test/helpers/server.js';

// PRODUCT.md "Guest control through agents": GET /api/agent/commands?wait=N, the heartbeat fallback,
// POST /api/agent/operations/:id/result, expiry, and the end of every operation when an agent dies,
// the server restarts or a result comes twice.

const GUESTS = [
  { vmid: 100, name: 'web', type: 'qemu', status: 'running' },
  { vmid: 9000, name: 'template', type: 'qemu', status: 'stopped' },
];

let server: TestServer;
let clock: ManualClock;
let host: Enrolled;

async function start(options: { dbPath?: string } = {}) {
  clock ??= manualClock();
  server = await startHostServer({ clock, ...options });
}
async function fresh() {
  clock = manualClock();
  await start();
  host = await enrolledHost(server);
  expect((await heartbeat(server, host.host_token, { guests: GUESTS })).status).toBe(200);
}
afterEach(async () => {
  await server?.stop();
});

const agent = () => server.anonymous();
const poll = (wait: number | string, token = host.host_token) => agent().get(`/api/agent/commands?wait=${wait}`, bearer(token));
const act = (vmid: number, body: unknown) => server.client.post(`/api/hosts/${host.host_id}/guests/${vmid}/actions`, body);
const result = (id: string, body: unknown, token = host.host_token) => agent().post(`/api/agent/operations/${id}/result`, body, bearer(token));
const operation = async (id: string) => (await server.client.get(`/api/operations/${id}`)).body;

describe('GET /api/agent/commands', () => {
  it('a waiting poll gets a new action within 2 s of the request; it is handed out once and becomes sent', async () => {
    await fresh();
    const waiting = poll(10);
    const second = poll(1);
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    const res = await act(100, { action: 'stop' });
    expect(res.status).toBe(202);
    const answer = await waiting;
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ commands: [{ type: 'guest.action', operation_id: res.body.operation_id, vmid: 100, guest_type: 'qemu', action: 'stop' }] });
    // The other poll and the heartbeat do not get it again.
    expect((await second).status).toBe(204);
    expect((await heartbeat(server, host.host_token, { guests: GUESTS })).body.commands).toEqual([]);
    expect(await operation(res.body.operation_id)).toMatchObject({ status: 'sent', sent_at: '2026-11-22T10:00:00.000Z' });
  });

  it('answers 204 when nothing came within the wait; refuses a bad wait with 400 and other tokens with 401', async () => {
    await fresh();
    const t0 = performance.now();
    expect((await poll(1)).status).toBe(204);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(900);
    expect((await poll(0)).status).toBe(204);
    for (const wait of ['31', '-1', 'abc', '1.5']) {
      expect(await poll(wait), wait).toMatchObject({ status: 400, body: { errors: [{ field: 'wait' }] } });
    }
    expect(await poll(0, 'hfh_not-a-token')).toMatchObject({ status: 401, body: { error: 'invalid token' } });
    expect((await server.client.get('/api/agent/commands?wait=0')).status).toBe(401);
  });

  it('the heartbeat answer carries a pending action when no poll took it (the fallback)', async () => {
    await fresh();
    const res = await act(100, { action: 'start' });
    const answer = await heartbeat(server, host.host_token, { guests: GUESTS });
    expect(answer.body.commands).toEqual([{ type: 'guest.action', operation_id: res.body.operation_id, vmid: 100, guest_type: 'qemu', action: 'start' }]);
    expect((await poll(0)).status).toBe(204);
  });

  it('a poll waiting when its host token is revoked gets nothing', async () => {
    await fresh();
    const waiting = poll(2);
    await new Promise((r) => setTimeout(r, 100));
    expect((await server.client.post(`/api/hosts/${host.host_id}/revoke-token`, undefined)).status).toBeLessThan(300);
    // The host is still online for a moment, but its token is gone: the command waits for no one.
    await act(100, { action: 'start' });
    expect((await waiting).status).toBe(204);
  });
});

describe('POST /api/agent/operations/:id/result', () => {
  it('ends the operation with the exit code and the last 4 KiB of output; a repeat changes nothing', async () => {
    await fresh();
    const { body } = await act(100, { action: 'stop' });
    await poll(0);
    clock.advance(2000);
    const output = `${'x'.repeat(5000)}done`;
    expect((await result(body.operation_id, { exit_code: 0, output, finished_at: '2026-11-22T10:00:01.500Z' })).status).toBe(204);
    const ended = await operation(body.operation_id);
    expect(ended).toMatchObject({ status: 'succeeded', exit_code: 0, finished_at: '2026-11-22T10:00:01.500Z' });
    expect(Buffer.byteLength(ended.output)).toBe(4096);
    expect(ended.output.endsWith('done')).toBe(true);
    expect((await result(body.operation_id, { exit_code: 1, output: 'again' })).status).toBe(204);
    expect(await operation(body.operation_id)).toEqual(ended);
  });

  it('a non-zero exit is failed; another host’s or an unknown operation is 401; bad bodies are 400', async () => {
    await fresh();
    const other = await enrolledHost(server, { hostname: 'pve2' });
    const { body } = await act(100, { action: 'stop' });
    await poll(0);
    expect(await result(body.operation_id, { exit_code: 0 }, other.host_token)).toMatchObject({ status: 401, body: { error: 'invalid token' } });
    expect(await result('no-such-operation', { exit_code: 0 })).toMatchObject({ status: 401, body: { error: 'invalid token' } });
    for (const bad of [{}, { exit_code: 'zero' }, { exit_code: 256 }, { exit_code: 0, finished_at: 'yesterday' }, { exit_code: 0, output: 5 }]) {
      expect((await result(body.operation_id, bad)).status, JSON.stringify(bad)).toBe(400);
    }
    expect((await result(body.operation_id, { exit_code: 2, output: 'VM is locked' })).status).toBe(204);
    expect(await operation(body.operation_id)).toMatchObject({ status: 'failed', exit_code: 2, output: 'VM is locked' });
  });
});

describe('expiry: no operation stays sent forever', () => {
  it('a sent action with no result in time expires (the agent died); a late result changes nothing; an expired clone takes its instance', async () => {
    await fresh();
    const stop = await act(100, { action: 'stop' });
    const clone = await act(9000, { action: 'clone', new_vmid: 300, name: 'copy' });
    expect((await server.client.get('/api/instances/300')).status).toBe(200);
    await poll(0);
    // stop may take 60 s on the host; after 5 minutes without a result it is given up.
    clock.advance(5 * 60_000 - 1);
    server.hosts.sweep();
    expect(await operation(stop.body.operation_id)).toMatchObject({ status: 'sent' });
    clock.advance(2);
    server.hosts.sweep();
    expect(await operation(stop.body.operation_id)).toMatchObject({ status: 'expired', finished_at: '2026-11-22T10:05:00.001Z' });
    // A clone may run 30 minutes: it is still awaited.
    expect(await operation(clone.body.operation_id)).toMatchObject({ status: 'sent' });
    clock.advance(27 * 60_000);
    server.hosts.sweep();
    expect(await operation(clone.body.operation_id)).toMatchObject({ status: 'expired' });
    expect((await server.client.get('/api/instances/300')).status).toBe(404);
    expect((await result(stop.body.operation_id, { exit_code: 0 })).status).toBe(204);
    expect(await operation(stop.body.operation_id)).toMatchObject({ status: 'expired', exit_code: null });
  });

  it('an action no agent fetched within 10 minutes expires', async () => {
    await fresh();
    const { body } = await act(100, { action: 'start' });
    clock.advance(10 * 60_000 + 1);
    server.hosts.sweep();
    expect(await operation(body.operation_id)).toMatchObject({ status: 'expired', sent_at: null });
    expect(await heartbeat(server, host.host_token, { guests: GUESTS })).toMatchObject({ body: { commands: [] } });
  });

  it('a delivered host removal whose receipt never came ends as expired after 7 days; a forced removal still ends the host', async () => {
    await fresh();
    const removal = await server.client.delete(`/api/hosts/${host.host_id}`);
    const answer = await heartbeat(server, host.host_token, { guests: GUESTS });
    expect(answer.body.commands).toEqual([expect.objectContaining({ type: 'uninstall', operation_id: removal.body.operation_id })]);
    clock.advance(7 * 24 * 3600_000 - 1000);
    server.hosts.sweep();
    // A week on, the first session has long expired.
    const client = await server.signIn('administrator');
    const read = async () => (await client.get(`/api/operations/${removal.body.operation_id}`)).body;
    expect(await read()).toMatchObject({ type: 'uninstall', status: 'sent' });
    clock.advance(2000);
    server.hosts.sweep();
    expect(await read()).toMatchObject({ type: 'uninstall', status: 'expired' });
    expect((await client.get(`/api/hosts/${host.host_id}`)).body).toMatchObject({ status: 'deleting', deletion: { operation_id: removal.body.operation_id, status: 'expired' } });
    expect((await client.delete(`/api/hosts/${host.host_id}?force=true`)).status).toBe(200);
    expect((await client.get(`/api/hosts/${host.host_id}`)).body).toMatchObject({ status: 'deleted' });
    expect((await client.get('/api/operations?status=sent')).body).toEqual([]);
  });

  it('a server restarted mid-action takes the result afterwards, or expires the action when none comes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-restart-'));
    const dbPath = path.join(dir, 'fleet.db');
    clock = manualClock();
    await start({ dbPath });
    host = await enrolledHost(server);
    await heartbeat(server, host.host_token, { guests: GUESTS });
    await server.client.post('/api/instances', buildInstance({ vmid: 100, name: 'web' }));
    const a = await act(100, { action: 'stop' });
    const b = await act(9000, { action: 'snapshot', name: 'base' });
    expect((await poll(0)).body.commands).toHaveLength(2);
    await server.stop();

    await start({ dbPath });
    expect(await operation(a.body.operation_id)).toMatchObject({ status: 'sent' });
    expect((await result(a.body.operation_id, { exit_code: 0 })).status).toBe(204);
    expect(await operation(a.body.operation_id)).toMatchObject({ status: 'succeeded' });
    // A snapshot may take 10 minutes on the host, and its result a minute more.
    clock.advance(11 * 60_000 + 1);
    server.hosts.sweep();
    expect(await operation(b.body.operation_id)).toMatchObject({ status: 'expired' });
    const open = (await server.client.get('/api/operations?status=sent')).body;
    expect(open).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('agent logs', () => {
  it('POST /api/hosts/:id/logs makes one logs operation; the agent’s output is shown to operators only', async () => {
    await fresh();
    const res = await server.client.post(`/api/hosts/${host.host_id}/logs`, undefined);
    expect(res).toMatchObject({ status: 202, body: { status: 'pending' } });
    expect((await server.client.post(`/api/hosts/${host.host_id}/logs`, undefined)).body.operation_id).toBe(res.body.operation_id);
    expect((await poll(0)).body).toEqual({ commands: [{ type: 'logs', operation_id: res.body.operation_id }] });
    await result(res.body.operation_id, { exit_code: 0, output: 'Nov 22 homefleet-agent[1]: heartbeat ok\n' });
    expect(await operation(res.body.operation_id)).toMatchObject({ type: 'logs', status: 'succeeded', output: 'Nov 22 homefleet-agent[1]: heartbeat ok\n' });
    const viewer = await server.signIn('viewer');
    expect((await viewer.post(`/api/hosts/${host.host_id}/logs`, undefined)).status).toBe(403);
    expect((await viewer.get(`/api/operations/${res.body.operation_id}`)).body).not.toHaveProperty('output');
  });

  it('a logs operation keeps the last 64 KiB of the journal, starting at a whole line; a guest action keeps 4 KiB', async () => {
    await fresh();
    // 200 journal lines of 570 bytes (114,000 bytes, é takes two): the cut falls inside a line, which is dropped whole.
    const lines = Array.from({ length: 200 }, (_, i) => `Nov 22 10:00:${String(i % 60).padStart(2, '0')} pve1 homefleet-agent[4242]: line ${String(i).padStart(3, '0')} ${'é'.repeat(170)}`.padEnd(399, '.'));
    const journal = lines.map((l) => `${l}\n`).join('');
    const logs = await server.client.post(`/api/hosts/${host.host_id}/logs`, undefined);
    await poll(0);
    expect((await result(logs.body.operation_id, { exit_code: 0, output: journal })).status).toBe(204);
    const kept = (await operation(logs.body.operation_id)).output as string;
    const keptBytes = Buffer.byteLength(kept);
    expect(keptBytes).toBeLessThanOrEqual(64 * 1024);
    expect(keptBytes).toBeGreaterThan(64 * 1024 - Buffer.byteLength(lines[0]!) - 1);
    expect(journal.endsWith(kept)).toBe(true);
    // Whole lines only: the first kept line is one the agent sent.
    expect(lines).toContain(kept.split('\n')[0]);

    const { body } = await act(100, { action: 'stop' });
    await poll(0);
    expect((await result(body.operation_id, { exit_code: 0, output: journal })).status).toBe(204);
    expect(Buffer.byteLength((await operation(body.operation_id)).output)).toBeLessThanOrEqual(4096);
  });
});
