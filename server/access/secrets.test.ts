import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestResponse } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';

const SETUP_TOKEN = 'secret-setup-token-QX7';
const TELEMETRY_TOKEN = 'secret-telemetry-token-0123456789-ZZ';
const ADMIN_PASSWORD = 'secret-admin-password-A1';
const ADMIN_NEW_PASSWORD = 'secret-admin-password-A2';
const USER_PASSWORD = 'secret-user-password-U1';
const WRONG_PASSWORD = 'secret-wrong-password-W1';

let server: TestServer;
const logLines: string[] = [];
/** Everything a client saw, except the one response whose purpose is to hand over a temporary password. */
const seen: string[] = [];
const sessionTokens: string[] = [];
const temporaryPasswords: string[] = [];

async function record(res: Promise<TestResponse>, handsOverTemporaryPassword = false): Promise<TestResponse> {
  const r = await res;
  if (!handsOverTemporaryPassword) seen.push(r.text);
  // Headers other than Set-Cookie (which carries the session token by design).
  r.headers.forEach((value, name) => name !== 'set-cookie' && seen.push(`${name}: ${value}`));
  for (const line of r.headers.getSetCookie()) {
    const token = line.split(';')[0]!.split('=')[1];
    if (token) sessionTokens.push(token);
  }
  return r;
}

beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
  server = await startServer({
    signedIn: false,
    config: { setupToken: SETUP_TOKEN, telemetryToken: TELEMETRY_TOKEN },
    logger: pino({ level: 'trace' }, sink),
  });
  const admin = server.anonymous();
  // The setup page echoes the token from its own URL into the form by design; the rest of it is checked.
  await record(admin.get(`/setup?token=${SETUP_TOKEN}`).then((r) => ({ ...r, text: r.text.replace(SETUP_TOKEN, '') })));
  await record(admin.post('/setup', { setup_token: SETUP_TOKEN, username: 'root', display_name: 'Root', password: ADMIN_PASSWORD }));
  await record(admin.post('/api/auth/login', { username: 'root', password: WRONG_PASSWORD }));
  await record(admin.post('/api/auth/login', { username: 'nobody', password: WRONG_PASSWORD }));
  await record(admin.post('/api/auth/login', { username: 'root', password: ADMIN_PASSWORD }));

  const created = await record(admin.post('/api/users', { username: 'ops', display_name: 'Ops', role: 'operator' }), true);
  temporaryPasswords.push(created.body.temporary_password);
  const ops = server.anonymous();
  await record(ops.post('/api/auth/login', { username: 'ops', password: temporaryPasswords[0] }));
  await record(ops.get('/api/instances'));
  await record(ops.post('/api/auth/password', { current_password: WRONG_PASSWORD, new_password: USER_PASSWORD }));
  await record(ops.post('/api/auth/password', { current_password: temporaryPasswords[0], new_password: USER_PASSWORD }));
  await record(ops.post('/api/instances', { vmid: 300, name: 'game', state: 'deployed', stack: 'development' }));

  const reset = await record(admin.post('/api/users/2/reset-password'), true);
  temporaryPasswords.push(reset.body.temporary_password);
  await record(admin.patch('/api/users/2', { role: 'viewer', display_name: 'Ops Two' }));
  await record(admin.post('/api/users/2/revoke-sessions'));

  const reporter = server.anonymous();
  await record(reporter.post('/api/telemetry', { kind: 'match', players: 4 }, { authorization: `Bearer ${TELEMETRY_TOKEN}` }));
  await record(reporter.post('/api/telemetry', { kind: 'x' }, { authorization: `Bearer ${WRONG_PASSWORD}` }));
  await record(admin.get('/api/telemetry'));

  await record(admin.post('/api/auth/password', { current_password: ADMIN_PASSWORD, new_password: ADMIN_NEW_PASSWORD }));
  await record(admin.get('/api/auth/session'));
  await record(admin.get('/api/users'));
  await record(admin.get('/api/audit?limit=1000'));
  await record(admin.post('/api/auth/logout'));
  await record(admin.post('/setup', { setup_token: SETUP_TOKEN, username: 'late', display_name: 'Late', password: ADMIN_PASSWORD }));
});
afterAll(() => server.stop());

function wholeDatabase(): string {
  const tables = server.db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  return JSON.stringify(tables.map(({ name }) => [name, server.db.prepare(`SELECT * FROM "${name}"`).all()]));
}

describe('secrets never leave where they belong', () => {
  it('the scripted session really used the secrets', () => {
    expect(sessionTokens.length).toBeGreaterThanOrEqual(4);
    expect(temporaryPasswords).toHaveLength(2);
    const audit = JSON.parse(seen.find((t) => t.includes('"login.failure"'))!) as Array<{ action: string }>;
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(['setup', 'login.success', 'login.failure', 'user.create', 'user.reset_password', 'password.change', 'request']));
  });

  it('no password, temporary password, setup token, telemetry token or session token is in the database, the audit, any API answer or the logs', () => {
    const places = { database: wholeDatabase(), responses: seen.join('\n'), logs: logLines.join('') };
    const secrets = [SETUP_TOKEN, TELEMETRY_TOKEN, ADMIN_PASSWORD, ADMIN_NEW_PASSWORD, USER_PASSWORD, WRONG_PASSWORD, ...temporaryPasswords, ...sessionTokens];
    for (const [place, text] of Object.entries(places)) {
      expect(text.length, place).toBeGreaterThan(100);
      for (const secret of secrets) expect(text.includes(secret), `${place} contains ${secret.slice(0, 12)}…`).toBe(false);
    }
  });

  it('every request is one log line: method, path without its query, status, duration', () => {
    const requests = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(20);
    expect(requests[0]).toEqual(expect.objectContaining({ level: 30, method: 'GET', path: '/setup', status: 200, ms: expect.any(Number) }));
    expect(requests).toContainEqual(expect.objectContaining({ method: 'POST', path: '/api/instances', status: 201 }));
  });
});
