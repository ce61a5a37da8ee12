// Notification channels against real receivers on 127.0.0.1 (HTTP for webhook, ntfy, Gotify and
// Discord; smtp-server for e-mail). The app runs on a hand-moved clock, so the retry delays of
// PRODUCT.md (1 s, 10 s, 60 s) are checked as they are, without waiting for them.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../test/helpers/clock.js';
import { heartbeatBody, startHostServer, enrolledHost, bearer } from '../../test/helpers/hosts.js';
import { startReceiver, type Receiver } from '../../test/helpers/receiver.js';
import type { TestServer } from '../../test/helpers/server.js';
import { openStream } from '../../test/helpers/sse.js';

const clock = manualClock(Date.parse('2026-11-22T12:00:00Z'));
const PASSWORD = 'smtp-pass-line-one\nsmtp-pass-line-two';
let server: TestServer;
let receiver: Receiver;
let smtp: SMTPServer;
let smtpPort: number;
const mails: { from: string; to: string[]; text: string }[] = [];

beforeAll(async () => {
  server = await startHostServer({
    clock,
    monitoring: { notifications: { pollMs: 20 }, alerts: { evaluateMs: 3_600_000 } },
  });
  // The n-th request: 500 for the 2nd and 3rd (a receiver that fails twice, then accepts).
  receiver = await startReceiver((n) => (n === 2 || n === 3 ? 500 : 200));
  smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, done) {
      if (auth.username === 'mailer' && auth.password === PASSWORD) done(null, { user: 'mailer' });
      else done(new Error('bad credentials'));
    },
    onData(stream, session, done) {
      let text = '';
      stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
      stream.on('end', () => {
        mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), text });
        done();
      });
    },
  });
  smtp.listen(0, '127.0.0.1');
  await once(smtp.server, 'listening');
  smtpPort = (smtp.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const channel = async (body: Record<string, unknown>) => {
  const res = await server.client.post('/api/notifications/channels', { rules: 'all', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number };
};
const deliveries = async (channelId: number) => (await server.client.get(`/api/notifications/deliveries?channel_id=${channelId}`)).body;
/** Waits (real time) until `check` holds: the queue works on its own timer. */
async function until(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (await check()) return;
  throw new Error('condition not met in time');
}

describe('channel types', () => {
  it('ntfy: POST <server>/<topic>, the message as body, Title, Priority, Tags and the token as a bearer', async () => {
    const c = await channel({ name: 'phone', type: 'ntfy', config: { server: `${receiver.url}/`, topic: 'homelab_alerts', token: 'tk_ntfy-token' } });
    expect((await server.client.post(`/api/notifications/channels/${c.id}/test`)).body).toMatchObject({ ok: true, error: null });
    const [req] = receiver.received.slice(-1);
    expect(req).toMatchObject({ method: 'POST', path: '/homelab_alerts', headers: { title: 'homefleet: test notification', priority: '3', tags: 'homefleet,test', authorization: 'Bearer tk_ntfy-token' } });
    expect(req!.body).toMatch(/^This is a test from homefleet/);
  });

  it('Gotify: POST <server>/message with JSON {title, message, priority} and X-Gotify-Key', async () => {
    const c = await channel({ name: 'gotify', type: 'gotify', config: { server: receiver.url, token: 'gotify-app-token' } });
    const before = receiver.received.length;
    // The receiver answers 500 to its 2nd request: a test reports that, once, without retrying.
    expect((await server.client.post(`/api/notifications/channels/${c.id}/test`)).body).toMatchObject({ ok: false, error: 'the receiver answered HTTP 500' });
    expect(receiver.received.length).toBe(before + 1);
    const req = receiver.received.at(-1)!;
    expect(req).toMatchObject({ path: '/message', headers: { 'x-gotify-key': 'gotify-app-token', 'content-type': 'application/json' } });
    expect(JSON.parse(req.body)).toEqual({ title: 'homefleet: test notification', message: expect.stringMatching(/^This is a test/), priority: 4 });
    expect(await deliveries(c.id)).toEqual([expect.objectContaining({ event: 'test', status: 'failed', attempts: 1, error: 'the receiver answered HTTP 500' })]);
    await server.client.delete(`/api/notifications/channels/${c.id}`);
  });

  it('Discord: POST the webhook URL with JSON {content}; e-mail through SMTP with its password, newline and all', async () => {
    receiver.received.length = 0;
    const d = await channel({ name: 'dc', type: 'discord', config: { webhook_url: `${receiver.url}/api/webhooks/1/abc` } });
    await server.client.post(`/api/notifications/channels/${d.id}/test`); // the 3rd request overall: 500
    expect((await server.client.post(`/api/notifications/channels/${d.id}/test`)).body.ok).toBe(true);
    const req = receiver.received.at(-1)!;
    expect(req.path).toBe('/api/webhooks/1/abc');
    expect(JSON.parse(req.body)).toMatchObject({ content: expect.stringMatching(/^\*\*homefleet: test notification\*\*\n/) });
    await server.client.delete(`/api/notifications/channels/${d.id}`);

    // This server offers no STARTTLS: the channel allows the password in plain text.
    const mail = { host: '127.0.0.1', port: smtpPort, secure: false, allow_plaintext_password: true, user: 'mailer', from: 'homefleet@example.org', to: 'ops@example.org, oncall@example.org' };
    const e = await channel({ name: 'mail', type: 'email', config: { ...mail, password: PASSWORD } });
    expect((await server.client.post(`/api/notifications/channels/${e.id}/test`)).body).toMatchObject({ ok: true });
    expect(mails.at(-1)).toMatchObject({ from: 'homefleet@example.org', to: ['ops@example.org', 'oncall@example.org'] });
    expect(mails.at(-1)!.text).toContain('Subject: homefleet: test notification');

    const wrong = await server.client.put(`/api/notifications/channels/${e.id}`, { name: 'mail', type: 'email', rules: 'all', config: { ...mail, password: 'not\nit' } });
    expect(wrong.body.config.password).toBe('**REDACTED**');
    const failed = await server.client.post(`/api/notifications/channels/${e.id}/test`);
    expect(failed.body).toMatchObject({ ok: false, error: 'the SMTP server refused the user name or password (SMTP 535)' });
    await server.client.delete(`/api/notifications/channels/${e.id}`);
  });

  it('refuses a header secret with a line break (it would end the header), without echoing it', async () => {
    const res = await server.client.post('/api/notifications/channels', { name: 'x', type: 'ntfy', rules: 'all', config: { topic: 't', token: 'abc\r\nX-Injected: 1' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ field: 'config.token', message: 'must not contain control characters (line breaks, tabs)' }] });
    const missing = await server.client.post('/api/notifications/channels', { name: 'x', type: 'gotify', rules: 'all', config: { server: receiver.url, token: '**REDACTED**' } });
    expect(missing.body.errors[0].field).toBe('config.token');
  });
});

describe('alerts to channels', () => {
  let host: { host_id: number; host_token: string };
  let hook: { id: number };
  let flaky: Receiver;
  afterAll(() => flaky?.close());

  it('a firing alert queues a delivery per channel that wants it; a receiver that fails twice gets it on the 3rd attempt, after 1 s and 10 s', async () => {
    for (const c of (await server.client.get('/api/notifications/channels')).body) await server.client.delete(`/api/notifications/channels/${c.id}`);
    receiver.received.length = 0;
    flaky = await startReceiver((n) => (n <= 2 ? 503 : 200));
    hook = await channel({ name: 'hook', type: 'webhook', config: { url: flaky.url }, rules: ['host.offline'] });
    const other = await channel({ name: 'jobs only', type: 'webhook', config: { url: receiver.url }, rules: ['job.failed'] });
    const info = await channel({ name: 'critical only', type: 'webhook', config: { url: receiver.url }, rules: 'all', min_severity: 'critical' });
    await server.client.put('/api/alerts/rules/host.offline', { severity: 'warning' });
    const stream = await openStream(server.client);

    host = await enrolledHost(server);
    expect((await server.anonymous().post('/api/agent/heartbeat', heartbeatBody(), bearer(host.host_token))).status).toBe(200);
    clock.advance(91_000);
    server.monitoring.alerts.evaluate();
    const firing = JSON.parse((await stream.waitFor((f) => f.event === 'alert.firing')).data!);
    expect(firing).toMatchObject({ rule: 'host.offline', severity: 'warning', subject: { type: 'host', id: String(host.host_id) }, status: 'firing' });

    await until(async () => (await deliveries(hook.id))[0]?.attempts === 1);
    expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'pending', error: 'the receiver answered HTTP 503', next_attempt_at: new Date(clock.now() + 1_000).toISOString() });
    clock.advance(1_000);
    await until(async () => (await deliveries(hook.id))[0]?.attempts === 2);
    expect((await deliveries(hook.id))[0]).toMatchObject({ status: 'pending', next_attempt_at: new Date(clock.now() + 10_000).toISOString() });
    clock.advance(9_999);
    await new Promise((r) => setTimeout(r, 100));
    expect(flaky.received).toHaveLength(2);
    clock.advance(1);
    await until(async () => (await deliveries(hook.id))[0]?.status === 'sent');
    expect((await deliveries(hook.id))[0]).toMatchObject({ event: 'alert.firing', alert_id: firing.id, attempts: 3, error: null });
    expect(flaky.received.map((r) => JSON.parse(r.body).alert.id)).toEqual([firing.id, firing.id, firing.id]);
    // Neither the job.failed channel nor the critical-only one wanted a warning about a host.
    expect(await deliveries(other.id)).toEqual([]);
    expect(await deliveries(info.id)).toEqual([]);
    expect(receiver.received).toHaveLength(0);
    stream.close();
  });

  it('a receiver that never accepts: 4 attempts (the first and 3 retries after 1 s, 10 s, 60 s), then failed', async () => {
    const dead = await startReceiver(() => 500);
    const c = await channel({ name: 'dead', type: 'webhook', config: { url: dead.url }, rules: ['host.offline'] });
    // The host comes back: the alert resolves, and both channels are told.
    expect((await server.anonymous().post('/api/agent/heartbeat', heartbeatBody(), bearer(host.host_token))).status).toBe(200);
    server.monitoring.alerts.evaluate();
    for (const [attempts, wait] of [[1, 1_000], [2, 10_000], [3, 60_000]] as const) {
      await until(async () => (await deliveries(c.id))[0]?.attempts === attempts);
      clock.advance(wait);
    }
    await until(async () => (await deliveries(c.id))[0]?.status === 'failed');
    expect((await deliveries(c.id))[0]).toMatchObject({ event: 'alert.resolved', attempts: 4, error: 'the receiver answered HTTP 500', next_attempt_at: null });
    expect(dead.received).toHaveLength(4);
    await until(async () => (await deliveries(hook.id))[0]?.event === 'alert.resolved' && (await deliveries(hook.id))[0]?.status === 'sent');
    await server.client.delete(`/api/notifications/channels/${c.id}`);
    await dead.close();
  });

  it('records as suppressed, and sends nothing, for a muted host or during quiet hours', async () => {
    const quiet = await channel({ name: 'quiet', type: 'webhook', config: { url: receiver.url }, rules: ['host.offline'], quiet_hours: { start: '11:00', end: '14:00', timezone: 'Europe/Berlin' } });
    expect((await server.client.get('/api/notifications/channels')).body.find((c: { id: number }) => c.id === quiet.id).quiet_hours).toEqual({ start: '11:00', end: '14:00', timezone: 'Europe/Berlin' });
    // Muted through the host's maintenance policy, as an administrator does it.
    const maintenance = `/api/hosts/${host.host_id}/maintenance`;
    expect((await server.client.put(maintenance, { muted: true })).status).toBe(200);
    clock.advance(91_000);
    server.monitoring.alerts.evaluate();
    // 12:0x UTC is 13:0x in Berlin: quiet; and the host is muted, which is said first.
    expect(await deliveries(quiet.id)).toEqual([expect.objectContaining({ event: 'alert.firing', status: 'suppressed', error: 'the host is muted', attempts: 0 })]);
    expect((await deliveries(hook.id))[0]).toMatchObject({ event: 'alert.firing', status: 'suppressed', error: 'the host is muted' });
    expect((await server.client.put(maintenance, { muted: false })).status).toBe(200);
    expect((await server.anonymous().post('/api/agent/heartbeat', heartbeatBody(), bearer(host.host_token))).status).toBe(200);
    server.monitoring.alerts.evaluate();
    expect((await deliveries(quiet.id))[0]).toMatchObject({ event: 'alert.resolved', status: 'suppressed', error: 'quiet hours' });
    await until(async () => (await deliveries(hook.id))[0]?.status === 'sent');
    expect(receiver.received).toHaveLength(0);
    // The alert itself is recorded either way.
    expect((await server.client.get('/api/alerts?status=resolved')).body).toHaveLength(2);
  });
});
