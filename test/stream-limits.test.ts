import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { accountsWithTokens } from './helpers/accounts-db.js';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';
import { openUnread } from './helpers/sse.js';

// Attack review (issue 25): one viewer with 200 tokens held all 1,000 event streams, and an
// administrator then got 503. Streams are capped per account (10), tokens per account (50), and the
// last twentieth of the streams is kept for administrators.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-stream-limits-'));

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Opens one unread stream per token in the list, all at once; returns the statuses, sorted. */
async function openAll(port: number, tokens: string[]): Promise<number[]> {
  const opened = await Promise.all(tokens.map((token) => openUnread(port, { authorization: `Bearer ${token}` })));
  onTestFinished(() => opened.forEach((o) => o.socket.destroy()));
  return opened.map((o) => o.status).sort();
}

const times = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);

describe('event stream limits (built server)', () => {
  it('one account gets 10 streams across its tokens, opened in parallel; the 11th is 429', async () => {
    const dbPath = path.join(dir, 'per-account', 'homefleet.db');
    fs.mkdirSync(path.dirname(dbPath));
    const [[a, b, c] = [], [other] = []] = await accountsWithTokens(dbPath, [
      { username: 'viewer', role: 'viewer', tokens: 3 },
      { username: 'another', role: 'viewer', tokens: 1 },
    ]);
    const server = await startHeadless({ DB_PATH: dbPath });
    const port = Number(new URL(server.url).port);
    // 4 + 4 + 3: each token under its own cap of 5, the account over its 10.
    expect(await openAll(port, [...times(4, a!), ...times(4, b!), ...times(3, c!)])).toEqual([...times(10, 200), 429]);
    expect(await openAll(port, [other!])).toEqual([200]);
    expect((await server.stop()).exitCode).toBe(0);
  });

  it('viewers asking for all 1,000 streams get 950; an administrator still gets one', { timeout: 60_000 }, async () => {
    const dbPath = path.join(dir, 'reserve', 'homefleet.db');
    fs.mkdirSync(path.dirname(dbPath));
    const viewers = Array.from({ length: 100 }, (_, i) => ({ username: `viewer${i}`, role: 'viewer' as const, tokens: 2 }));
    const made = await accountsWithTokens(dbPath, [...viewers, { username: 'admin', role: 'administrator', tokens: 1 }]);
    const admin = made.pop()![0]!;
    const server = await startHeadless({ DB_PATH: dbPath });
    const port = Number(new URL(server.url).port);
    const statuses = await openAll(port, made.flat().flatMap((token) => times(5, token)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(950);
    expect(statuses.filter((s) => s !== 200)).toEqual(times(50, 503));
    expect(await openAll(port, [admin])).toEqual([200]);
    expect((await server.stop()).exitCode).toBe(0);
  });
});

describe('personal API tokens (built server)', () => {
  it('an account holds at most 50: of 60 created in parallel, 50 are made and 10 refused with 409', async () => {
    const setupToken = 'token-cap-setup-token';
    const server = await startHeadless({ DB_PATH: path.join(dir, 'tokens.db'), FLEET_SETUP_TOKEN: setupToken, FLEET_AUTH_ALLOW_HTTP: 'true' });
    const browser = { cookie: await setUpAdmin(server.url, setupToken), origin: server.url };
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => rawRequest(server.url, 'POST', '/api/tokens', browser, { name: `t${i}`, role: 'viewer' })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.body])).toEqual(times(10, [409, { error: 'too many API tokens: an account may hold at most 50; revoke one first' }]));
    const listed = await rawRequest(server.url, 'GET', '/api/tokens', browser);
    expect(listed.body).toHaveLength(50);
    // Revoking one makes room for one.
    expect((await rawRequest(server.url, 'DELETE', `/api/tokens/${listed.body[0].id}`, browser)).status).toBe(204);
    expect((await rawRequest(server.url, 'POST', '/api/tokens', browser, { name: 'again', role: 'viewer' })).status).toBe(201);
    expect((await rawRequest(server.url, 'POST', '/api/tokens', browser, { name: 'over', role: 'viewer' })).status).toBe(409);
    expect((await server.stop()).exitCode).toBe(0);
  });
});
