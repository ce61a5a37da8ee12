import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// Attack review (issue 25): an administrator's personal API token (hfp_) downloaded the whole database
// through a snapshot, and minted enrollment tokens that outlive it.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-session-only-'));
const SETUP_TOKEN = 'session-only-setup-token';

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('routes for a browser session only (built server)', () => {
  it('refuse an administrator’s API token with the 401 /api/audit and /api/users give it: snapshot download, new enrollment token', async () => {
    const server = await startHeadless({ DB_PATH: path.join(dir, 'homefleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' });
    const cookie = await setUpAdmin(server.url, SETUP_TOKEN);
    const browser = { cookie, origin: server.url };
    const made = await rawRequest(server.url, 'POST', '/api/tokens', browser, { name: 'automation', role: 'administrator' });
    expect(made.status).toBe(201);
    const token = { authorization: `Bearer ${made.body.token}` };

    const audit = await rawRequest(server.url, 'GET', '/api/audit', token);
    const users = await rawRequest(server.url, 'GET', '/api/users', token);
    expect(audit.status).toBe(401);
    expect(users.body).toEqual(audit.body);

    // Taking a snapshot stays open to tokens (a script may take one before a change); it never leaves the server through one.
    const taken = await rawRequest(server.url, 'POST', '/api/snapshots', token);
    expect(taken.status).toBe(201);
    const name = taken.body.snapshot.name as string;
    const download = await rawRequest(server.url, 'GET', `/api/snapshots/${name}`, token);
    expect([download.status, download.body]).toEqual([401, audit.body]);
    const mint = await rawRequest(server.url, 'POST', '/api/hosts/enrollment-tokens', token, { max_uses: 1000, expires_in_s: 30 * 86_400 });
    expect([mint.status, mint.body]).toEqual([401, audit.body]);
    expect((await rawRequest(server.url, 'GET', '/api/hosts/enrollment-tokens', token)).body).toEqual([]);

    // The browser session still does both.
    const bySession = await fetch(`${server.url}/api/snapshots/${name}`, { headers: { cookie } });
    expect(bySession.status).toBe(200);
    expect(Buffer.from(await bySession.arrayBuffer()).subarray(0, 15).toString('latin1')).toBe('SQLite format 3');
    expect((await rawRequest(server.url, 'POST', '/api/hosts/enrollment-tokens', browser, {})).status).toBe(201);
    expect((await server.stop()).exitCode).toBe(0);
  });
});
