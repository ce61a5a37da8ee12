// Metrics, alerts and notifications through the BUILT server (dist/server/main.js in its own
// process) over real HTTP on 127.0.0.1, with time compressed by configuration: heartbeats every
// second (FLEET_HEARTBEAT_INTERVAL_S=1), so host.offline's for_s is 3 s. Receivers are real HTTP
// servers on loopback.
import { createHmac } from 'node:crypto';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { startHeadless, setUpAdmin, type Headless } from './helpers/headless.js';
import { heartbeatBody } from './helpers/hosts.js';
import { TestClient, type TestResponse } from './helpers/http.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';

const SETUP_TOKEN = 'monitoring-test-setup-token-0123456789';
// A webhook secret with a line break: no line of it may show up anywhere but in the HMAC.
const SECRET = 'first-line-of-the-secret\nsecond-line-of-the-secret';
const GIB = 2 ** 30;
const WEIRD = 'we"ird\\name';

let server: Headless;
let admin: TestClient;
let viewerToken: string;
let hook: Receiver;
const answers: TestResponse[] = [];

async function call(client: TestClient, method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const res = await client.request(method, path, body, headers);
  answers.push(res);
  return res;
}

async function enroll(hostname: string): Promise<{ host_id: number; host_token: string }> {
  const token = await call(admin, 'POST', '/api/hosts/enrollment-tokens', {});
  const res = await call(new TestClient(server.local), 'POST', '/api/agent/enroll', { hostname, machine_id: `machine-${hostname}`, agent_version: '1.0.0' }, { authorization: `Bearer ${token.body.token}` });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

const beat = (token: string, overrides: Record<string, unknown> = {}) =>
  call(new TestClient(server.local), 'POST', '/api/agent/heartbeat', heartbeatBody(overrides), { authorization: `Bearer ${token}` });

beforeAll(async () => {
  await ensureBuilt();
  hook = await startReceiver();
  server = await startHeadless({
    DB_PATH: tempDbPath(),
    FLEET_SETUP_TOKEN: SETUP_TOKEN,
    FLEET_AUTH_ALLOW_HTTP: 'true',
    FLEET_AGENT_ALLOW_HTTP: 'true',
    FLEET_HEARTBEAT_INTERVAL_S: '1',
  }, { shared: true });
  admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  const token = await call(admin, 'POST', '/api/tokens', { name: 'scraper', role: 'viewer' });
  expect(token.status, token.text).toBe(201);
  viewerToken = token.body.token;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await hook?.close();
  removeTempDbs();
});

describe('metrics', () => {
  let host: { host_id: number; host_token: string };

  it('a heartbeat stores host and guest numbers; the chart query answers them at 1-minute resolution', async () => {
    host = await enroll('pve-metrics');
    // Both heartbeats in one minute (and one quarter hour): the buckets below hold both.
    while (new Date().getUTCSeconds() > 50) await new Promise((r) => setTimeout(r, 500));
    const guests = [
      { vmid: 101, name: WEIRD, type: 'qemu', status: 'running', cpu: 0.25, mem: 2 * GIB, maxmem: 4 * GIB, disk: 0, maxdisk: 32 * GIB, uptime_s: 500, netin: 1000, netout: 2000 },
      { vmid: 102, name: 'ct', type: 'lxc', status: 'stopped' },
    ];
    const metrics = { cpu: 0.5, mem_used: 6 * GIB, mem_total: 16 * GIB, disk_used: 40 * GIB, disk_total: 100 * GIB, load1: 1.5, net_rx_bytes: '1000', net_tx_bytes: '2000' };
    expect((await beat(host.host_token, { hostname: 'pve-metrics', metrics, guests })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await beat(host.host_token, { hostname: 'pve-metrics', metrics: { ...metrics, cpu: 0.7, net_rx_bytes: 3000 }, guests })).status).toBe(200);

    const res = await call(admin, 'GET', `/api/hosts/${host.host_id}/metrics?series=cpu,mem_used,net_rx`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.step_s).toBe(60);
    expect(Object.keys(res.body.series)).toEqual(['cpu', 'mem_used', 'net_rx']);
    const [cpu] = res.body.series.cpu as [number, number, number][];
    expect(cpu![1]).toBeCloseTo(0.6, 5);
    expect(cpu![2]).toBeCloseTo(0.7, 5);
    // Seven significant digits: what a bucket keeps.
    expect(res.body.series.mem_used[0][1]).toBeCloseTo(6 * GIB, -4);
    // A counter becomes a rate: 2000 bytes in about 1.1 s.
    expect(res.body.series.net_rx[0][1]).toBeGreaterThan(1000);
    expect(res.body.series.net_rx[0][1]).toBeLessThan(2000);

    const guest = await call(admin, 'GET', `/api/hosts/${host.host_id}/guests/101/metrics?series=cpu,mem`);
    expect(guest.status).toBe(200);
    expect(guest.body.series.cpu[0].slice(1)).toEqual([0.25, 0.25]);
    expect(guest.body.series.mem[0][2]).toBeCloseTo(2 * GIB, -4);

    const latest = await call(admin, 'GET', `/api/hosts/${host.host_id}/metrics/latest`);
    expect(latest.body.host).toMatchObject({ cpu: 0.7, mem_total: 16 * GIB });
    expect(latest.body.guests).toEqual([expect.objectContaining({ vmid: 101, cpu: 0.25, maxmem: 4 * GIB })]);
  });

  it('refuses a bad number with 400 naming the field, and stores nothing of that heartbeat', async () => {
    const bad = await beat(host.host_token, { metrics: { cpu: 1.5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ field: 'metrics.cpu', message: 'must be a number from 0 to 1' }]);
    const guest = await beat(host.host_token, { guests: [{ vmid: 101, name: 'x', type: 'qemu', status: 'running', mem: -1 }] });
    expect(guest.status).toBe(400);
    expect(guest.body.errors).toEqual([{ field: 'guests.0.mem', message: 'must be a non-negative number of bytes' }]);
    const text = await beat(host.host_token, { metrics: { disk_used: '1e9' } });
    expect(text.body.errors[0].field).toBe('metrics.disk_used');
    // A newline in a guest name never reaches a label: refused at the door.
    const name = await beat(host.host_token, { guests: [{ vmid: 103, name: 'a\nb', type: 'qemu', status: 'running' }] });
    expect(name.body.errors[0].field).toBe('guests.0.name');
    // A vmid past 32 bits is listed but not charted (a frame holds 32-bit vmids): never a 500.
    const other = await enroll('pve-big');
    const big = await beat(other.host_token, { hostname: 'pve-big', guests: [{ vmid: 99_999_999_999, name: 'big', type: 'qemu', status: 'running', cpu: 0.5 }, { vmid: 7, name: 'small', type: 'lxc', status: 'running', cpu: 0.25 }] });
    expect(big.status, big.text).toBe(200);
    expect((await call(admin, 'GET', `/api/hosts/${other.host_id}/guests/7/metrics?series=cpu`)).body.series.cpu[0].slice(1)).toEqual([0.25, 0.25]);
    expect((await call(admin, 'DELETE', `/api/hosts/${other.host_id}`)).status).toBe(202);
  });

  it('the chart query checks its input', async () => {
    const base = `/api/hosts/${host.host_id}/metrics`;
    expect((await call(admin, 'GET', `${base}?series=cpu,nonsense`)).body.errors[0].field).toBe('series');
    expect((await call(admin, 'GET', `${base}?from=yesterday`)).body.errors[0].field).toBe('from');
    expect((await call(admin, 'GET', `${base}?from=2026-11-22T10:00:00Z&to=2026-11-22T09:00:00Z`)).status).toBe(400);
    expect((await call(admin, 'GET', '/api/hosts/9999/metrics')).status).toBe(404);
    expect((await call(admin, 'GET', '/api/hosts/abc/metrics')).status).toBe(400);
    expect((await call(new TestClient(server.local), 'GET', base)).status).toBe(401);
    // A 30-day range is answered at the 15-minute resolution (30 days / 15 min = 2880 > 1500 → 6 h).
    const month = await call(admin, 'GET', `${base}?from=${new Date(Date.now() - 30 * 86_400_000).toISOString()}`);
    expect(month.body.step_s).toBe(21_600);
    const week = await call(admin, 'GET', `${base}?from=${new Date(Date.now() - 7 * 86_400_000).toISOString()}`);
    expect(week.body.step_s).toBe(900);
    // The newest minutes are in it, before any roll-up ran: gathered from the 1-minute buckets.
    expect(week.body.series.cpu.length).toBe(1);
  });

  it('GET /metrics: Prometheus text for a personal API token only, label values escaped so a parser reads them back', async () => {
    const anonymous = new TestClient(server.local);
    expect((await call(anonymous, 'GET', '/metrics')).status).toBe(401);
    // A browser session is not a scraper's credential.
    expect((await call(admin, 'GET', '/metrics')).status).toBe(401);
    expect((await call(anonymous, 'GET', '/metrics', undefined, { authorization: `Bearer ${host.host_token}` })).status).toBe(401);
    const res = await call(anonymous, 'GET', '/metrics', undefined, { authorization: `Bearer ${viewerToken}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(res.text);
    const family = (name: string) => families.find((f) => f.name === name);
    for (const name of ['homefleet_host_up', 'homefleet_host_cpu_ratio', 'homefleet_host_memory_bytes', 'homefleet_host_disk_bytes', 'homefleet_guest_running', 'homefleet_guest_cpu_ratio', 'homefleet_guest_memory_bytes', 'homefleet_instances', 'homefleet_job_last_success_timestamp_seconds', 'homefleet_alerts_firing', 'process_resident_memory_bytes']) {
      expect(family(name), name).toBeDefined();
    }
    expect(family('homefleet_host_up')!.metrics).toContainEqual({ labels: { host: 'pve-metrics' }, value: '1' });
    expect(family('homefleet_guest_running')!.metrics).toContainEqual({ labels: { host: 'pve-metrics', vmid: '101', name: WEIRD, type: 'qemu' }, value: '1' });
    expect(family('homefleet_guest_running')!.metrics).toContainEqual({ labels: { host: 'pve-metrics', vmid: '102', name: 'ct', type: 'lxc' }, value: '0' });
    expect(family('homefleet_guest_memory_bytes')!.metrics).toContainEqual({ labels: { host: 'pve-metrics', vmid: '101', name: WEIRD, type: 'qemu' }, value: String(2 * GIB) });
    expect(family('homefleet_host_memory_bytes')!.metrics).toContainEqual({ labels: { host: 'pve-metrics', kind: 'total' }, value: String(16 * GIB) });
    expect(family('homefleet_alerts_firing')!.metrics).toHaveLength(11);
    // Done with this host: removed, it is watched no more (the offline test below has its own).
    expect((await call(admin, 'DELETE', `/api/hosts/${host.host_id}`)).status).toBe(202);
  });
});

describe('alert rules and alerts', () => {
  it('lists the built-in rules with their defaults; only an administrator changes them, within their fields', async () => {
    const rules = await call(admin, 'GET', '/api/alerts/rules');
    expect(rules.body.map((r: { rule: string }) => r.rule)).toEqual(['host.offline', 'guest.down', 'host.disk', 'host.memory', 'host.cpu', 'agent.outdated', 'job.failed', 'snapshot.failed', 'tls.expiry', 'policy.failed', 'backup.failed']);
    expect(rules.body[0]).toMatchObject({ enabled: true, severity: 'critical', for_s: 3 });
    expect(rules.body[2]).toMatchObject({ rule: 'host.disk', for_s: 300, percent: 90 });
    expect(rules.body[8]).toMatchObject({ rule: 'tls.expiry', days: 14 });

    const asViewer = { authorization: `Bearer ${viewerToken}` };
    const anonymous = new TestClient(server.local);
    expect((await call(anonymous, 'GET', '/api/alerts/rules', undefined, asViewer)).status).toBe(200);
    expect((await call(anonymous, 'PUT', '/api/alerts/rules/host.cpu', { percent: 80 }, asViewer)).status).toBe(403);
    expect((await call(anonymous, 'PUT', '/api/alerts/rules/host.cpu', { percent: 80 })).status).toBe(401);
    expect((await call(admin, 'PUT', '/api/alerts/rules/nope', { enabled: false })).status).toBe(404);
    const bad = await call(admin, 'PUT', '/api/alerts/rules/host.cpu', { percent: 150, severity: 'loud' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['percent', 'severity']);
    expect((await call(admin, 'PUT', '/api/alerts/rules/host.offline', { percent: 50 })).body).toEqual({ errors: [{ field: 'percent', message: 'host.offline has no percent threshold' }] });
    const ok = await call(admin, 'PUT', '/api/alerts/rules/host.cpu', { percent: 80, severity: 'critical' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ rule: 'host.cpu', percent: 80, severity: 'critical', for_s: 600 });
    const audit = await call(admin, 'GET', '/api/audit?limit=5');
    expect(audit.body.find((e: { action: string }) => e.action === 'alert_rule.update')).toMatchObject({
      subject: { type: 'alert_rule', id: 'host.cpu' },
      changes: [
        { field: 'severity', before: 'warning', after: 'critical' },
        { field: 'percent', before: 95, after: 80 },
      ],
    });
    expect((await call(admin, 'GET', '/api/alerts?status=burning')).status).toBe(400);
    expect((await call(admin, 'GET', '/api/alerts?limit=0')).status).toBe(400);
  });

  it('a host that stops heartbeating raises host.offline and a signed webhook delivery within for_s + 2 intervals; its return resolves it', async () => {
    const channel = await call(admin, 'POST', '/api/notifications/channels', { name: 'hook', type: 'webhook', config: { url: `${hook.url}/in`, secret: SECRET }, rules: ['host.offline'], min_severity: 'warning' });
    expect(channel.status, channel.text).toBe(201);
    const host = await enroll('pve-quiet');
    expect((await beat(host.host_token, { hostname: 'pve-quiet' })).status).toBe(200);
    const lastBeat = Date.now();

    const [firing] = await hook.waitFor(1, 8_000);
    const elapsed = Date.now() - lastBeat;
    expect(elapsed).toBeLessThanOrEqual((3 + 2) * 1000);
    expect(elapsed).toBeGreaterThanOrEqual(3 * 1000);
    expect(firing!.headers['x-homefleet-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(firing!.body).digest('hex')}`);
    const sent = JSON.parse(firing!.body);
    expect(sent).toMatchObject({ event: 'alert.firing', alert: { rule: 'host.offline', severity: 'critical', status: 'firing', subject: { type: 'host', id: String(host.host_id), name: 'pve-quiet' } } });
    const alerts = await call(admin, 'GET', '/api/alerts?status=firing');
    expect(alerts.body).toEqual([expect.objectContaining({ id: sent.alert.id, rule: 'host.offline', resolved_at: null })]);

    // One alert per rule and subject: more silence does not fire it again.
    await new Promise((r) => setTimeout(r, 1500));
    expect(hook.received).toHaveLength(1);

    expect((await beat(host.host_token, { hostname: 'pve-quiet' })).status).toBe(200);
    const [, resolved] = await hook.waitFor(2, 5_000);
    expect(JSON.parse(resolved!.body)).toMatchObject({ event: 'alert.resolved', alert: { id: sent.alert.id, status: 'resolved' } });
    expect((await call(admin, 'GET', '/api/alerts?status=resolved')).body[0]).toMatchObject({ id: sent.alert.id, status: 'resolved' });
    const deliveries = await call(admin, 'GET', '/api/notifications/deliveries');
    expect(deliveries.body.slice(0, 2)).toEqual([
      expect.objectContaining({ channel_name: 'hook', event: 'alert.resolved', status: 'sent', attempts: 1, error: null }),
      expect.objectContaining({ channel_name: 'hook', event: 'alert.firing', status: 'sent', attempts: 1, error: null }),
    ]);
  }, 30_000);
});

describe('notification channels', () => {
  it('keep secrets write-only, refuse URLs that are not http(s), and test a channel on request', async () => {
    const list = await call(admin, 'GET', '/api/notifications/channels');
    const hookChannel = list.body.find((c: { name: string }) => c.name === 'hook');
    expect(hookChannel.config).toEqual({ url: `${hook.url}/in`, secret: '**REDACTED**' });

    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/x', 'gopher://127.0.0.1:70/', 'javascript:alert(1)', 'http://user:pw@127.0.0.1/']) {
      const res = await call(admin, 'POST', '/api/notifications/channels', { name: 'bad', type: 'webhook', config: { url }, rules: 'all' });
      expect(res.status, url).toBe(400);
      expect(res.body.errors[0].field).toBe('config.url');
    }
    expect((await call(admin, 'POST', '/api/notifications/channels', { name: 'bad', type: 'pager', config: {}, rules: 'all' })).body.errors[0].field).toBe('type');
    expect((await call(admin, 'POST', '/api/notifications/channels', { name: 'bad', type: 'ntfy', config: { topic: 't' }, rules: ['nope'] })).status).toBe(400);
    const asViewer = { authorization: `Bearer ${viewerToken}` };
    expect((await call(new TestClient(server.local), 'GET', '/api/notifications/channels', undefined, asViewer)).status).toBe(403);

    // Sent back as **REDACTED**, the stored secret is kept: the test message is signed with it.
    const put = await call(admin, 'PUT', `/api/notifications/channels/${hookChannel.id}`, { ...hookChannel, name: 'hook 2' });
    expect(put.status, put.text).toBe(200);
    expect(put.body.config.secret).toBe('**REDACTED**');
    const before = hook.received.length;
    const test = await call(admin, 'POST', `/api/notifications/channels/${hookChannel.id}/test`);
    expect(test.body).toEqual({ ok: true, error: null, delivery_id: expect.any(Number) });
    const [, , ...rest] = await hook.waitFor(before + 1);
    const message = rest.at(-1)!;
    expect(JSON.parse(message.body)).toMatchObject({ event: 'test', alert: null });
    expect(message.headers['x-homefleet-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(message.body).digest('hex')}`);

    // The Discord webhook URL is a secret as a whole; a failing test says why without it.
    const closed = await startReceiver();
    await closed.close();
    const discord = await call(admin, 'POST', '/api/notifications/channels', { name: 'dc', type: 'discord', config: { webhook_url: `${closed.url}/api/webhooks/discord-secret-path` }, rules: 'all' });
    expect(discord.body.config).toEqual({ webhook_url: '**REDACTED**' });
    const failed = await call(admin, 'POST', `/api/notifications/channels/${discord.body.id}/test`);
    expect(failed.body).toEqual({ ok: false, error: 'connection refused', delivery_id: expect.any(Number) });
    const log = await call(admin, 'GET', `/api/notifications/deliveries?channel_id=${discord.body.id}`);
    expect(log.body).toEqual([expect.objectContaining({ event: 'test', status: 'failed', error: 'connection refused', attempts: 1 })]);

    expect((await call(admin, 'DELETE', `/api/notifications/channels/${discord.body.id}`)).status).toBe(204);
    expect((await call(admin, 'DELETE', `/api/notifications/channels/${discord.body.id}`)).status).toBe(404);
    expect((await call(admin, 'POST', `/api/notifications/channels/${discord.body.id}/test`)).status).toBe(404);
  });

  it('no secret in any answer, audit entry or log line', async () => {
    const audit = await call(admin, 'GET', '/api/audit?limit=1000');
    expect(audit.body.some((e: { action: string }) => e.action === 'notification_channel.create')).toBe(true);
    const everything = [...answers.map((a) => a.text), server.log().map((l) => JSON.stringify(l)).join('\n')].join('\n');
    for (const needle of ['first-line-of-the-secret', 'second-line-of-the-secret', 'discord-secret-path']) expect(everything).not.toContain(needle);
  });
});
