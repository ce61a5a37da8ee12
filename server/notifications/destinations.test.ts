// A channel's stored secret goes only where it was first sent: a changed server, URL or SMTP host
// needs it typed again. And an SMTP password travels only over TLS unless the channel says otherwise.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../test/helpers/receiver.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';

let server: TestServer;
let trusted: Receiver;
let listener: Receiver;
beforeAll(async () => {
  server = await startServer();
  trusted = await startReceiver();
  listener = await startReceiver();
});
afterAll(async () => {
  await server?.stop();
  await trusted?.close();
  await listener?.close();
});

async function create(type: string, config: Record<string, unknown>) {
  const body = { name: `${type} channel`, type, config, rules: 'all' };
  const res = await server.client.post('/api/notifications/channels', body);
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as number, put: (next: Record<string, unknown>) => server.client.put(`/api/notifications/channels/${res.body.id}`, { ...body, config: next }) };
}
const test = async (id: number) => (await server.client.post(`/api/notifications/channels/${id}/test`)).body;

describe('a changed destination with a secret sent back as **REDACTED**', () => {
  it.each([
    ['gotify', { server: '<trusted>', token: 'gotify-stored-token' }, { server: '<listener>', token: '**REDACTED**' }, 'token must be entered again when the server changes'],
    ['ntfy', { server: '<trusted>', topic: 'alerts', token: 'ntfy-stored-token' }, { server: '<listener>', topic: 'alerts', token: '**REDACTED**' }, 'token must be entered again when the server changes'],
    ['webhook', { url: '<trusted>/in', secret: 'webhook-stored-secret' }, { url: '<listener>/in', secret: '**REDACTED**' }, 'secret must be entered again when the URL changes'],
  ])('%s: 400 naming the field, nothing stored, and a test still goes only to the old server', async (type, config, changed, error) => {
    const at = (c: Record<string, string>) => JSON.parse(JSON.stringify(c).replaceAll('<trusted>', trusted.url).replaceAll('<listener>', listener.url));
    const channel = await create(type, at(config));
    const before = (await server.client.get('/api/notifications/channels')).body;
    const res = await channel.put(at(changed));
    const field = error.split(' ')[0];
    expect([res.status, res.body]).toEqual([400, { error, errors: [{ field: `config.${field}`, message: error.slice(field!.length + 1) }] }]);
    expect((await server.client.get('/api/notifications/channels')).body).toEqual(before);
    expect(await test(channel.id)).toMatchObject({ ok: true });
    expect(listener.received).toEqual([]);
    expect(JSON.stringify(trusted.received.at(-1)!.headers)).toMatch(/stored-token|sha256=/);
  });

  it('the same server written another way, another topic, or the secret typed again: saved', async () => {
    const ntfy = await create('ntfy', { server: trusted.url, topic: 'alerts', token: 'ntfy-stored-token' });
    expect((await ntfy.put({ server: `${trusted.url}/`, topic: 'other', token: '**REDACTED**' })).status).toBe(200);
    expect((await ntfy.put({ server: listener.url, topic: 'other', token: 'ntfy-new-token' })).status).toBe(200);
    expect(await test(ntfy.id)).toMatchObject({ ok: true });
    expect(listener.received.map((r) => r.headers.authorization)).toEqual(['Bearer ntfy-new-token']);
    listener.received.length = 0;
    // Discord's webhook URL is its secret: sent back, the channel keeps it, as before.
    const discord = await create('discord', { webhook_url: `${trusted.url}/api/webhooks/1/x` });
    expect((await discord.put({ webhook_url: '**REDACTED**' })).status).toBe(200);
  });

  it('e-mail: a new host or port, or allowing the password in plain text, needs the password again', async () => {
    const mail = { host: '127.0.0.1', port: 2525, secure: false, user: 'mailer', from: 'homefleet@example.org', to: 'ops@example.org' };
    const channel = await create('email', { ...mail, password: 'smtp-stored-password' });
    const error = 'password must be entered again when the SMTP host, port or TLS setting changes';
    for (const changed of [{ host: 'localhost' }, { port: 2526 }, { allow_plaintext_password: true }]) {
      const res = await channel.put({ ...mail, ...changed, password: '**REDACTED**' });
      expect([res.status, res.body.error], JSON.stringify(changed)).toEqual([400, error]);
    }
    expect((await channel.put({ ...mail, secure: true, password: '**REDACTED**' })).status).toBe(200);
    expect((await channel.put({ ...mail, host: 'LOCALHOST', password: 'smtp-stored-password' })).status).toBe(200);
  });
});

describe('an SMTP password', () => {
  let smtp: SMTPServer;
  let port: number;
  const logins: string[] = [];
  beforeAll(async () => {
    // No STARTTLS, and plain-text AUTH accepted: only the client can keep the password back.
    smtp = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, done) {
        logins.push(auth.password ?? '');
        done(null, { user: auth.username });
      },
      onData(stream, _session, done) {
        stream.resume().on('end', () => done());
      },
    });
    smtp.listen(0, '127.0.0.1');
    await once(smtp.server, 'listening');
    port = (smtp.server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

  it('is not sent to a server without STARTTLS: the test fails saying why; with allow_plaintext_password it is', async () => {
    const mail = { host: '127.0.0.1', port, secure: false, user: 'mailer', password: 'smtp-plain-password', from: 'homefleet@example.org', to: 'ops@example.org' };
    const channel = await create('email', mail);
    expect(await test(channel.id)).toMatchObject({
      ok: false,
      error: 'TLS with the SMTP server failed: no STARTTLS, or a certificate that is not trusted (SMTP 500); the password is sent only over TLS (set secure, or allow_plaintext_password to send it without)',
    });
    expect(logins).toEqual([]);
    expect((await channel.put({ ...mail, allow_plaintext_password: true })).status).toBe(200);
    expect(await test(channel.id)).toMatchObject({ ok: true });
    expect(logins).toEqual(['smtp-plain-password']);
  });
});
