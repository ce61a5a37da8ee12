// Campaigns (PRODUCT.md "Collections, scripts, campaigns and release channels") through the BUILT
// server (dist/server/main.js in its own process) over real HTTP on 127.0.0.1, with a real SQLite
// file and hosts that speak the agent's side of the wire by hand (heartbeats, command polls,
// results): every route, status and role, dry runs, waves, failures, waiting targets, pause, resume
// and cancel, agent upgrades settled by the heartbeat rule, parallel creation, and a restart.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { bearer, heldPosts } from './helpers/hosts.js';
import { TestClient } from './helpers/http.js';
import { openStream } from './helpers/sse.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';
import { until as waitUntil } from './helpers/until.js';

const SETUP_TOKEN = 'campaigns-test-setup-token-0123456789';
const ENV = { FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true', FLEET_HEARTBEAT_INTERVAL_S: '600' };

let server: Headless;
let dbPath: string;
let admin: TestClient;
let operator: TestClient;
let operatorToken: string;
let viewer: TestClient;
let viewerToken: string;
let anonymous: TestClient;
let serial = 0;

interface Host {
  id: number;
  hostname: string;
  agent: TestClient;
  guests: object[];
}

const until = <T>(what: string, read: () => Promise<T | undefined | false>, ms = 10_000) => waitUntil(what, read, ms, 50);

const guest = (vmid: number, extra: object = {}) => ({ vmid, name: `g${vmid}`, type: 'qemu', status: 'running', ...extra });

/** A host enrolled through the API; it beats with `guests` unless `offline`. */
async function enrolledHost(guests: object[], options: { offline?: boolean; version?: string } = {}): Promise<Host> {
  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: `campaigns ${++serial}` });
  expect(enrollment.status, enrollment.text).toBe(201);
  const hostname = `pve-c${serial}`;
  const version = options.version ?? '1.0.0';
  const enrolled = await anonymous.post('/api/agent/enroll', { hostname, machine_id: `campaign-machine-${serial}`, agent_version: version }, bearer(enrollment.body.token));
  expect(enrolled.status, enrolled.text).toBe(201);
  const host = { id: enrolled.body.host_id as number, hostname, agent: new TestClient(server.local, bearer(enrolled.body.host_token)), guests };
  if (!options.offline) await beat(host, version);
  return host;
}

async function beat(host: Host, version = '1.0.0', startedAt = '2026-11-22T09:00:00Z'): Promise<any> {
  const res = await host.agent.post('/api/agent/heartbeat', {
    agent_version: version,
    started_at: startedAt,
    hostname: host.hostname,
    addresses: ['192.0.2.10'],
    uptime_s: 3600,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: host.guests,
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** What the agent's command poll hands out now. */
async function poll(host: Host): Promise<any[]> {
  const res = await host.agent.get('/api/agent/commands?wait=0');
  expect([200, 204], res.text).toContain(res.status);
  return res.status === 200 ? res.body.commands : [];
}

const result = (host: Host, id: string, exit_code: number) => host.agent.post(`/api/agent/operations/${id}/result`, { exit_code, output: `exit ${exit_code}` });

/** Takes the host's commands and answers each: exit 0, or `fail` for the vmids listed. Returns the vmids it ran. */
async function runCommands(host: Host, fail: number[] = []): Promise<number[]> {
  const ran: number[] = [];
  for (const command of await poll(host)) {
    ran.push(command.vmid);
    expect((await result(host, command.operation_id, fail.includes(command.vmid) ? 1 : 0)).status).toBe(204);
  }
  return ran;
}

async function tokenFor(role: 'viewer' | 'operator'): Promise<string> {
  const res = await admin.post('/api/tokens', { name: `${role} campaigns`, role });
  expect(res.status, res.text).toBe(201);
  return res.body.token as string;
}

const campaign = (id: number) => admin.get(`/api/campaigns/${id}`).then((r) => r.body);
const statusesOf = (c: any) => c.targets.map((t: any) => `${t.vmid ?? t.name}:${t.status}`);

function count(sql: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  await ensureBuilt();
  dbPath = tempDbPath();
  server = await startHeadless({ DB_PATH: dbPath, ...ENV }, { shared: true });
  admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  anonymous = new TestClient(server.local);
  operatorToken = await tokenFor('operator');
  operator = new TestClient(server.local, bearer(operatorToken));
  viewerToken = await tokenFor('viewer');
  viewer = new TestClient(server.local, bearer(viewerToken));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

describe('POST /api/campaigns', () => {
  it('runs a reboot wave by wave: each wave queued only once the last one ended, every target with its operation', async () => {
    const a = await enrolledHost([guest(1101), guest(1102), guest(1103)]);
    const b = await enrolledHost([guest(1201), guest(1202)]);
    const res = await operator.post('/api/campaigns', { name: 'reboot all', target: { vmids: [1101, 1201, 1102, 1202, 1103] }, step: { type: 'guest.action', action: 'reboot' }, wave_size: 2 });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ name: 'reboot all', status: 'running', waves: 3, current_wave: 1, wave_size: 2, pause_s: 0, max_failures: 0, respect_maintenance: true, window_wait_h: 24, created_by: 'root', finished_at: null, duration_s: null });
    expect(res.body.counts).toEqual({ pending: 3, waiting: 0, running: 2, succeeded: 0, failed: 0, skipped: 0, cancelled: 0 });
    expect(res.body.targets.map((t: any) => [t.wave, t.host_id, t.vmid, t.name, t.status])).toEqual([
      [1, a.id, 1101, 'g1101', 'running'],
      [1, b.id, 1201, 'g1201', 'running'],
      [2, a.id, 1102, 'g1102', 'pending'],
      [2, b.id, 1202, 'g1202', 'pending'],
      [3, a.id, 1103, 'g1103', 'pending'],
    ]);
    const id = res.body.id;
    const op = (await admin.get(`/api/operations/${res.body.targets[0].operation_id}`)).body;
    expect(op).toMatchObject({ type: 'guest.action', action: 'reboot', vmid: 1101, status: 'pending', requested_by: 'root', reason: `campaign ${id} “reboot all”` });

    // Wave 1: one guest on each host. Wave 2 is not queued while one of wave 1 is still out.
    expect(await runCommands(a)).toEqual([1101]);
    await new Promise((r) => setTimeout(r, 300));
    expect(await poll(a)).toEqual([]);
    expect(await runCommands(b)).toEqual([1201]);
    await until('wave 2', async () => (await campaign(id)).current_wave === 2);
    expect([...(await runCommands(a)), ...(await runCommands(b))]).toEqual([1102, 1202]);
    await until('wave 3', async () => (await campaign(id)).current_wave === 3);
    expect(await runCommands(a)).toEqual([1103]);
    const done = await until('the campaign to succeed', async () => ((await campaign(id)).status === 'succeeded' ? campaign(id) : undefined));
    expect(done.counts.succeeded).toBe(5);
    expect(done.finished_at).not.toBeNull();
    expect(done.duration_s).toBeGreaterThanOrEqual(0);
    expect(done.targets.every((t: any) => t.operation_id && t.started_at && t.finished_at)).toBe(true);
    // Listed, and audited.
    expect((await viewer.get('/api/campaigns')).body.find((c: any) => c.id === id)).toMatchObject({ status: 'succeeded', counts: { succeeded: 5 } });
    expect(count(`SELECT count(*) FROM audit_log WHERE action = 'campaign.create' AND subject_id = '${id}'`)).toBe(1);
  });

  it('dry run: the waves and the skipped targets with their reasons, and nothing queued or stored', async () => {
    const h = await enrolledHost([guest(1301), guest(1302), guest(1303, { template: true }), guest(1304)]);
    // 1398 is in the registry but no host reports it: skipped under the registry's name. 1399 is nowhere.
    expect((await operator.post('/api/instances', { vmid: 1398, name: 'old-mail', state: 'deployed', stack: 'production' })).status).toBe(201);
    const before = [count('SELECT count(*) FROM campaigns'), count('SELECT count(*) FROM operations'), count('SELECT count(*) FROM audit_log')];
    const body = { name: 'preview', target: { vmids: [1301, 1302, 1303, 1398, 1399, 1304] }, step: { type: 'guest.action', action: 'snapshot', name: 'before_patch' }, wave_size: 2 };
    const res = await operator.post('/api/campaigns?dry_run=true', body);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      waves: [
        [
          { host_id: h.id, vmid: 1301, name: 'g1301' },
          { host_id: h.id, vmid: 1302, name: 'g1302' },
        ],
        [{ host_id: h.id, vmid: 1304, name: 'g1304' }],
      ],
      skipped: [
        { host_id: h.id, vmid: 1303, name: 'g1303', reason: 'guest is a template' },
        { host_id: null, vmid: 1398, name: 'old-mail', reason: 'no host reports this guest' },
        { host_id: null, vmid: 1399, name: '', reason: 'no host reports this guest' },
      ],
    });
    expect([count('SELECT count(*) FROM campaigns'), count('SELECT count(*) FROM operations'), count('SELECT count(*) FROM audit_log')]).toEqual(before);
    // {host_ids} with a guest action: every guest those hosts listed, templates skipped.
    const byHost = await operator.post('/api/campaigns?dry_run=true', { ...body, target: { host_ids: [h.id] } });
    expect(byHost.body.waves.flat().map((t: any) => t.vmid)).toEqual([1301, 1302, 1304]);
    expect(byHost.body.skipped.map((t: any) => t.vmid)).toEqual([1303]);
  });

  it('a script step goes where its script runs: a guest script into each guest (also of {host_ids}), a host script only onto {host_ids}', async () => {
    const h = await enrolledHost([guest(1351), guest(1352)]);
    const inGuests = (await admin.post('/api/scripts', { name: 'in guests', runs_on: 'guest', interpreter: 'bash', body: 'true\n' })).body.id;
    const onHosts = (await admin.post('/api/scripts', { name: 'on hosts', runs_on: 'host', interpreter: 'bash', body: 'true\n' })).body.id;
    const plan = (target: object, script_id: number) => operator.post('/api/campaigns?dry_run=true', { name: 'scripts', target, step: { type: 'script', script_id } });
    expect((await plan({ host_ids: [h.id] }, inGuests)).body).toEqual({
      waves: [[{ host_id: h.id, vmid: 1351, name: 'g1351' }], [{ host_id: h.id, vmid: 1352, name: 'g1352' }]],
      skipped: [],
    });
    expect((await plan({ host_ids: [h.id] }, onHosts)).body).toEqual({ waves: [[{ host_id: h.id, vmid: null, name: h.hostname }]], skipped: [] });
    const before = count('SELECT count(*) FROM campaigns');
    expect(await plan({ vmids: [1351] }, onHosts)).toMatchObject({ status: 400, body: { errors: [{ field: 'target', message: 'a script that runs on the host takes {host_ids}' }] } });
    expect(await operator.post('/api/campaigns', { name: 'gone', target: { vmids: [1351] }, step: { type: 'script', script_id: 999_999 } })).toMatchObject({
      status: 400,
      body: { errors: [{ field: 'step.script_id', message: 'script 999999 not found' }] },
    });
    expect(count('SELECT count(*) FROM campaigns')).toBe(before);
  });

  it('refuses bad bodies with 400 naming the field, and nothing is stored', async () => {
    const h = await enrolledHost([guest(1401)]);
    const before = count('SELECT count(*) FROM campaigns');
    const step = { type: 'guest.action', action: 'reboot' };
    const cases: [unknown, string][] = [
      [{ target: { vmids: [1401] }, step }, 'name'],
      [{ name: 'x', step }, 'target'],
      [{ name: 'x', target: { vmids: [1401], host_ids: [h.id] }, step }, 'target'],
      [{ name: 'x', target: { vmids: [1401, 1401] }, step }, 'target.vmids'],
      [{ name: 'x', target: { vmids: [] }, step }, 'target.vmids'],
      [{ name: 'x', target: { vmids: [1401] }, step: { type: 'guest.action', action: 'clone', new_vmid: 1500, name: 'c' } }, 'step.action'],
      [{ name: 'x', target: { vmids: [1401] }, step: { type: 'guest.action', action: 'snapshot' } }, 'step.name'],
      [{ name: 'x', target: { vmids: [1401] }, step: { type: 'launch' } }, 'step.type'],
      [{ name: 'x', target: { vmids: [1401] }, step: { type: 'script' } }, 'step.script_id'],
      [{ name: 'x', target: { vmids: [1401] }, step: { type: 'script', script_id: 1, timeout_s: 4000 } }, 'step.timeout_s'],
      [{ name: 'x', target: { vmids: [1401] }, step, wave_size: 0 }, 'wave_size'],
      [{ name: 'x', target: { vmids: [1401] }, step, wave_size: 101 }, 'wave_size'],
      [{ name: 'x', target: { vmids: [1401] }, step, pause_s: 3601 }, 'pause_s'],
      [{ name: 'x', target: { vmids: [1401] }, step, max_failures: -1 }, 'max_failures'],
      [{ name: 'x', target: { vmids: [1401] }, step, window_wait_h: 721 }, 'window_wait_h'],
      [{ name: 'x', target: { vmids: [1401] }, step, respect_maintenance: 'yes' }, 'respect_maintenance'],
      [{ name: 'x', target: { host_ids: [h.id, 99999] }, step }, 'target.host_ids.1'],
      [{ name: 'x', target: { vmids: [1401] }, step: { type: 'agent.upgrade' } }, 'target'],
      [{ name: 'x', target: { host_ids: [h.id] }, step: { type: 'agent.upgrade', version: '9.9.9' } }, 'step.version'],
      [[], 'body'],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post('/api/campaigns', body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.body.errors.map((e: any) => e.field), JSON.stringify(body)).toContain(field);
    }
    expect((await admin.post('/api/campaigns', '{"name":')).status).toBe(400);
    expect((await admin.post('/api/campaigns?dry_run=maybe', { name: 'x', target: { vmids: [1401] }, step })).status).toBe(400);
    expect(count('SELECT count(*) FROM campaigns')).toBe(before);
  });

  it('a failure over max_failures stops the campaign: failed, the rest skipped and never queued', async () => {
    const h = await enrolledHost([guest(1501), guest(1502), guest(1503), guest(1504), guest(1505)]);
    const res = await operator.post('/api/campaigns', { name: 'stop on failure', target: { vmids: [1501, 1502, 1503, 1504, 1505] }, step: { type: 'guest.action', action: 'stop' }, wave_size: 2, max_failures: 0 });
    expect(res.status, res.text).toBe(201);
    expect(await runCommands(h)).toEqual([1501, 1502]);
    await until('wave 2', async () => (await campaign(res.body.id)).current_wave === 2);
    expect(await runCommands(h, [1503])).toEqual([1503, 1504]);
    const c = await until('the campaign to fail', async () => ((await campaign(res.body.id)).status === 'failed' ? campaign(res.body.id) : undefined));
    expect(statusesOf(c)).toEqual(['1501:succeeded', '1502:succeeded', '1503:failed', '1504:succeeded', '1505:skipped']);
    expect(c.targets[2].reason).toBe('failed (exit 1)');
    expect(c.targets[4]).toMatchObject({ reason: 'the campaign stopped after 1 failure (max_failures 0)', operation_id: null });
    expect(c.failures).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(await poll(h)).toEqual([]);
    expect(count(`SELECT count(*) FROM operations WHERE vmid = 1505`)).toBe(0);
  });

  it('a target whose host is offline waits, and is skipped with the reason after window_wait_h; a locked guest waits until a heartbeat shows the lock cleared', async () => {
    const gone = await enrolledHost([], { offline: true, version: '0.9.0' });
    const h = await enrolledHost([guest(1601, { lock: 'backup' }), guest(1602)]);
    // An offline host's guests are not listed at all; an upgrade of it waits for it.
    const upgrade = await admin.post('/api/campaigns', { name: 'offline', target: { host_ids: [gone.id] }, step: { type: 'agent.upgrade', version: '1.0.0' }, window_wait_h: 0 });
    expect(upgrade.status, upgrade.text).toBe(201);
    expect(statusesOf(upgrade.body)).toEqual([`${gone.hostname}:skipped`]);
    expect(upgrade.body.targets[0].reason).toBe('host is offline (waited 0 h)');
    expect(upgrade.body.status).toBe('succeeded');

    const res = await operator.post('/api/campaigns', { name: 'locked', target: { vmids: [1601, 1602] }, step: { type: 'guest.action', action: 'reboot' }, wave_size: 2 });
    expect(res.status, res.text).toBe(201);
    expect(res.body.targets.map((t: any) => [t.vmid, t.status, t.reason])).toEqual([
      [1601, 'waiting', 'guest is locked (backup)'],
      [1602, 'running', null],
    ]);
    expect(await runCommands(h)).toEqual([1602]);
    h.guests = [guest(1601), guest(1602)];
    await beat(h);
    // The heartbeat that shows the lock cleared wakes the engine.
    expect(await until('1601 to be queued', async () => (await runCommands(h)).includes(1601) || undefined, 3_000)).toBe(true);
    await until('the campaign to succeed', async () => (await campaign(res.body.id)).status === 'succeeded');
  }, 30_000);

  it('maintenance windows are respected: a reboot outside the window waits (a start does not), is skipped after window_wait_h, and runs once a window opens', async () => {
    const h = await enrolledHost([guest(1651), guest(1652), guest(1653)]);
    // A window two hours from now, closed at this moment whatever the time of day.
    const at = (hours: number) => `${String((new Date().getUTCHours() + hours) % 24).padStart(2, '0')}:00`;
    const later = { windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: at(2), end: at(3) }], timezone: 'UTC', auto_upgrade: false, muted: false };
    expect((await admin.put(`/api/hosts/${h.id}/maintenance`, later)).status).toBe(200);

    const reboot = await operator.post('/api/campaigns', { name: 'window', target: { vmids: [1651] }, step: { type: 'guest.action', action: 'reboot' } });
    expect(reboot.body.targets.map((t: any) => [t.status, t.reason])).toEqual([['waiting', "outside the host's maintenance window"]]);
    const skipped = await operator.post('/api/campaigns', { name: 'no wait', target: { vmids: [1652] }, step: { type: 'guest.action', action: 'reboot' }, window_wait_h: 0 });
    expect(skipped.body).toMatchObject({ status: 'succeeded', targets: [{ status: 'skipped', reason: "outside the host's maintenance window (waited 0 h)" }] });
    const start = await operator.post('/api/campaigns', { name: 'start', target: { vmids: [1653] }, step: { type: 'guest.action', action: 'start' } });
    expect(start.body.targets[0]).toMatchObject({ status: 'running', reason: null });
    expect(await runCommands(h)).toEqual([1653]);

    // The window opens (here: every hour of every day); the next heartbeat wakes the engine.
    const always = { ...later, windows: [{ ...later.windows[0], start: '00:00', end: '00:00' }] };
    expect((await admin.put(`/api/hosts/${h.id}/maintenance`, always)).status).toBe(200);
    // The engine may also have queued it just before that heartbeat (its own tick), and then the
    // heartbeat's answer hands it out: those commands count as run too.
    const answered: { vmid: number; operation_id: string }[] = (await beat(h)).commands ?? [];
    for (const command of answered) expect((await result(h, command.operation_id, 0)).status).toBe(204);
    const ran = answered.some((c) => c.vmid === 1651) || (await until('1651 to be queued', async () => (await runCommands(h)).includes(1651) || undefined, 12_000));
    expect(ran).toBe(true);
    await until('the campaign to succeed', async () => (await campaign(reboot.body.id)).status === 'succeeded');
  }, 30_000);

  it('no target is run twice: ten campaigns made at once over the same guests give one campaign and one operation per guest', async () => {
    const h = await enrolledHost([guest(1701), guest(1702), guest(1703)]);
    const body = { name: 'race', target: { vmids: [1701, 1702, 1703] }, step: { type: 'guest.action', action: 'reboot' }, wave_size: 3 };
    const answers = await heldPosts(server.local, '/api/campaigns', { ...bearer(operatorToken), origin: server.local }, Array.from({ length: 10 }, () => body));
    expect(answers.map((a) => a.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const refused = answers.find((a) => a.status === 409)!.body;
    expect(refused.error).toBe('nothing to run: every target is skipped');
    expect(refused.skipped.map((t: any) => t.reason)).toEqual(Array(3).fill(expect.stringMatching(/^already in campaign \d+ “race”$/)));
    expect(count('SELECT count(*) FROM operations WHERE vmid IN (1701, 1702, 1703)')).toBe(3);
    expect((await runCommands(h)).sort()).toEqual([1701, 1702, 1703]);
  });
});

describe('pause, resume and cancel', () => {
  it('pause holds the next wave, resume goes on; a paused or ended campaign answers 409 where it must', async () => {
    const h = await enrolledHost([guest(1801), guest(1802)]);
    const res = await operator.post('/api/campaigns', { name: 'pausable', target: { vmids: [1801, 1802] }, step: { type: 'guest.action', action: 'reboot' } });
    const id = res.body.id;
    const paused = await operator.post(`/api/campaigns/${id}/pause`);
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body).toMatchObject({ status: 'paused' });
    expect((await operator.post(`/api/campaigns/${id}/pause`)).body).toEqual({ error: 'the campaign is not running' });
    // The operation already queued goes on; the next wave waits.
    expect(await runCommands(h)).toEqual([1801]);
    await until('1801 to be settled', async () => (await campaign(id)).targets[0].status === 'succeeded');
    await new Promise((r) => setTimeout(r, 300));
    expect(await poll(h)).toEqual([]);
    const resumed = await operator.post(`/api/campaigns/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe('running');
    expect((await operator.post(`/api/campaigns/${id}/resume`)).status).toBe(409);
    expect(await until('wave 2', async () => (await runCommands(h)).length > 0)).toBe(true);
    await until('the campaign to succeed', async () => (await campaign(id)).status === 'succeeded');
    for (const action of ['pause', 'resume', 'cancel']) expect((await operator.post(`/api/campaigns/${id}/${action}`)).body).toEqual({ error: 'the campaign has already ended' });
    expect(count(`SELECT count(*) FROM audit_log WHERE action IN ('campaign.pause', 'campaign.resume') AND subject_id = '${id}'`)).toBe(2);
  });

  it('cancel cancels the pending operations, the agent never gets them, and the rest is cancelled', async () => {
    const h = await enrolledHost([guest(1901), guest(1902), guest(1903)]);
    const res = await operator.post('/api/campaigns', { name: 'cancel me', target: { vmids: [1901, 1902, 1903] }, step: { type: 'guest.action', action: 'shutdown' }, wave_size: 2 });
    const cancelled = await operator.post(`/api/campaigns/${res.body.id}/cancel`);
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect(statusesOf(cancelled.body)).toEqual(['1901:cancelled', '1902:cancelled', '1903:cancelled']);
    expect(await poll(h)).toEqual([]);
    expect((await admin.get(`/api/operations/${res.body.targets[0].operation_id}`)).body.status).toBe('cancelled');
    expect(cancelled.body.finished_at).not.toBeNull();
    // Their guests are free for another campaign.
    expect((await operator.post('/api/campaigns?dry_run=true', { name: 'again', target: { vmids: [1901] }, step: { type: 'guest.action', action: 'start' } })).body.skipped).toEqual([]);
  });

  it('GET /api/campaigns/:id answers JSON, the same bytes until the campaign changes, then the change', async () => {
    await enrolledHost([guest(1951)]);
    const res = await operator.post('/api/campaigns', { name: 'read twice', target: { vmids: [1951] }, step: { type: 'guest.action', action: 'reboot' } });
    const first = await admin.get(`/api/campaigns/${res.body.id}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(first.body).toEqual(res.body);
    expect((await admin.get(`/api/campaigns/${res.body.id}`)).text).toBe(first.text);
    expect((await operator.post(`/api/campaigns/${res.body.id}/pause`)).status).toBe(200);
    expect((await admin.get(`/api/campaigns/${res.body.id}`)).body).toEqual({ ...res.body, status: 'paused' });
  });

  it('unknown campaigns are 404, bad ids 400', async () => {
    expect((await admin.get('/api/campaigns/999999')).body).toEqual({ error: 'campaign not found' });
    expect((await admin.get('/api/campaigns/abc')).status).toBe(400);
    for (const action of ['pause', 'resume', 'cancel']) expect((await operator.post(`/api/campaigns/999999/${action}`)).status).toBe(404);
  });
});

describe('live progress', () => {
  it('campaign.updated reaches a viewer’s stream as targets move, with the counts and no targets', async () => {
    const h = await enrolledHost([guest(2201), guest(2202)]);
    const stream = await openStream(viewer, '/api/events', bearer(viewerToken));
    expect(stream.status).toBe(200);
    try {
      const res = await operator.post('/api/campaigns', { name: 'live', target: { vmids: [2201, 2202] }, step: { type: 'guest.action', action: 'start' }, wave_size: 2 });
      const id = res.body.id;
      const first = await stream.waitFor((f) => f.event === 'campaign.updated' && JSON.parse(f.data!).id === id);
      expect(JSON.parse(first.data!)).toMatchObject({ id, name: 'live', status: 'running', counts: { running: 2 } });
      expect(JSON.parse(first.data!)).not.toHaveProperty('targets');
      await runCommands(h);
      const last = await stream.waitFor((f) => f.event === 'campaign.updated' && JSON.parse(f.data!).id === id && JSON.parse(f.data!).status === 'succeeded');
      expect(JSON.parse(last.data!).counts).toMatchObject({ succeeded: 2, running: 0 });
    } finally {
      stream.close();
    }
  });
});

describe('roles', () => {
  it('viewers read, operators run and steer, only hosts.manage upgrades agents, only an administrator forces; no session is 401', async () => {
    const h = await enrolledHost([guest(2001)], { version: '0.9.0' });
    const body = { name: 'roles', target: { vmids: [2001] }, step: { type: 'guest.action', action: 'start' } };
    for (const [method, path] of [['POST', '/api/campaigns'], ['GET', '/api/campaigns'], ['GET', '/api/campaigns/1'], ['POST', '/api/campaigns/1/pause'], ['POST', '/api/campaigns/1/resume'], ['POST', '/api/campaigns/1/cancel']] as const) {
      expect((await anonymous.request(method, path, method === 'POST' ? body : undefined)).status, path).toBe(401);
    }
    for (const path of ['/api/campaigns', '/api/campaigns/1/pause', '/api/campaigns/1/resume', '/api/campaigns/1/cancel']) {
      expect((await viewer.post(path, body)).body, path).toEqual({ error: 'forbidden' });
    }
    expect((await viewer.get('/api/campaigns')).status).toBe(200);
    const upgrade = { name: 'upgrade', target: { host_ids: [h.id] }, step: { type: 'agent.upgrade' } };
    expect((await operator.post('/api/campaigns', upgrade)).body).toEqual({ error: 'an agent.upgrade step needs hosts.manage' });
    expect((await operator.post('/api/campaigns', { ...body, step: { type: 'guest.action', action: 'stop', force: true } })).body).toEqual({ error: 'only an administrator may force an action' });
    const script = await admin.post('/api/scripts', { name: 'roles', runs_on: 'guest', interpreter: 'sh', body: 'true\n' });
    expect(script.status, script.text).toBe(201);
    expect((await operator.post('/api/campaigns?dry_run=true', { ...body, step: { type: 'script', script_id: script.body.id } })).status).toBe(200);
    const made = await operator.post('/api/campaigns', body);
    expect(made.status, made.text).toBe(201);
    expect((await viewer.get(`/api/campaigns/${made.body.id}`)).body.targets[0]).toMatchObject({ vmid: 2001, status: 'running' });
    expect((await admin.post(`/api/campaigns/${made.body.id}/cancel`)).status).toBe(200);
  });
});

describe('agent upgrades', () => {
  it('upgrades hosts wave by wave, each settled by the heartbeat rule (the new version, started after the upgrade began)', async () => {
    const hosts = [await enrolledHost([], { version: '0.9.0' }), await enrolledHost([], { version: '0.9.0' }), await enrolledHost([], { version: '1.0.0' })];
    const res = await admin.post('/api/campaigns', { name: 'agents', target: { host_ids: hosts.map((h) => h.id) }, step: { type: 'agent.upgrade' } });
    expect(res.status, res.text).toBe(201);
    // No version: each host's newest on its channel, decided as its wave starts.
    expect(res.body.step).toEqual({ type: 'agent.upgrade' });
    expect(res.body.targets.map((t: any) => [t.wave, t.status, t.reason])).toEqual([
      [1, 'running', null],
      [2, 'pending', null],
      [0, 'skipped', 'already runs 1.0.0'],
    ]);
    // The first host's heartbeat is offered the upgrade; the second's is not, yet.
    expect((await beat(hosts[0]!, '0.9.0')).commands).toEqual([{ type: 'upgrade', version: '1.0.0' }]);
    expect((await beat(hosts[1]!, '0.9.0')).commands).toEqual([]);
    // An old process beating again settles nothing; the new one, started now, does.
    await beat(hosts[0]!, '0.9.0');
    expect((await campaign(res.body.id)).current_wave).toBe(1);
    await beat(hosts[0]!, '1.0.0', new Date(Date.now() + 1000).toISOString().replace(/\.\d+Z$/, 'Z'));
    await until('wave 2', async () => (await campaign(res.body.id)).current_wave === 2);
    expect((await beat(hosts[1]!, '0.9.0')).commands).toEqual([{ type: 'upgrade', version: '1.0.0' }]);
    await beat(hosts[1]!, '1.0.0', new Date(Date.now() + 1000).toISOString().replace(/\.\d+Z$/, 'Z'));
    const done = await until('the campaign to succeed', async () => ((await campaign(res.body.id)).status === 'succeeded' ? campaign(res.body.id) : undefined));
    expect(statusesOf(done)).toEqual([`${hosts[0]!.hostname}:succeeded`, `${hosts[1]!.hostname}:succeeded`, `${hosts[2]!.hostname}:skipped`]);
  });
});

describe('a restart', () => {
  it('resumes a running campaign where it was: the pause already begun, then the next wave', async () => {
    const h = await enrolledHost([guest(2101), guest(2102)]);
    const res = await operator.post('/api/campaigns', { name: 'restart', target: { vmids: [2101, 2102] }, step: { type: 'guest.action', action: 'reboot' }, pause_s: 2 });
    expect(await runCommands(h)).toEqual([2101]);
    await until('the pause to begin', async () => (await campaign(res.body.id)).next_wave_at !== null);
    await server.stop();
    server = await startHeadless({ DB_PATH: dbPath, ...ENV }, { shared: true });
    for (const client of [admin, operator, viewer, anonymous, h.agent]) (client as any).baseUrl = server.local;
    const ran = await until('wave 2 after the restart', async () => {
      const got = await runCommands(h);
      return got.length ? got : undefined;
    });
    expect(ran).toEqual([2102]);
    const done = await until('the campaign to succeed', async () => ((await campaign(res.body.id)).status === 'succeeded' ? campaign(res.body.id) : undefined));
    // The pause was kept across the restart.
    expect(Date.parse(done.targets[1].started_at) - Date.parse(done.targets[0].finished_at)).toBeGreaterThanOrEqual(2000);
  }, 30_000);
});
