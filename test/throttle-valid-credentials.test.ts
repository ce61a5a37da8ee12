import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WINDOW_MS } from '../server/access/throttle.js';
import { ensureBuilt } from './helpers/build.js';
import { nextWindowClock } from './helpers/clock.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// Issue 34: a Prometheus job with a stale token, scraping beside a working one, filled the address's
// window and the working job got 429 for up to 15 minutes. "Throttling never locks a valid credential
// out: the per-address window counts failed credentials, and a request whose token or session is
// valid is served even while its address is throttled for failures."
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-throttle-'));
const SETUP_TOKEN = 'throttle-setup-token';

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('an address throttled for failed credentials (built server)', () => {
  it('still serves a valid hfp_ token and a valid session; the wrong token and wrong passwords get 429', { timeout: 40_000 }, async () => {
    // The server's clock, one second into a throttle window (nextWindowClock): its failures all count in that window.
    const server = await startHeadless({ DB_PATH: path.join(dir, 'homefleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' }, { clockShiftMs: nextWindowClock(WINDOW_MS).shiftMs });
    const base = server.url;
    const browser = { cookie: await setUpAdmin(base, SETUP_TOKEN), origin: base };
    const made = await rawRequest(base, 'POST', '/api/tokens', browser, { name: 'prometheus', role: 'viewer' });
    expect(made.status).toBe(201);
    const good = { authorization: `Bearer ${made.body.token}` };
    const stale = { authorization: `Bearer hfp_${'S'.repeat(43)}` };

    const scrapes: number[] = [];
    for (let i = 0; i < 12; i++) scrapes.push((await rawRequest(base, 'GET', '/metrics', stale)).status);
    expect(scrapes).toEqual([...Array(10).fill(401), 429, 429]);
    const refused = await rawRequest(base, 'GET', '/metrics', stale);
    expect(refused.status).toBe(429);
    // The rest of the window the server's shifted clock began: nearly all of its 15 minutes.
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(WINDOW_MS / 1000 - 60);

    // The working job, from the same address, is served; so is the browser.
    const scraped = await rawRequest(base, 'GET', '/metrics', good);
    expect(scraped.status).toBe(200);
    expect(scraped.headers['content-type']).toMatch(/^text\/plain/);
    expect((await rawRequest(base, 'GET', '/api/instances', good)).status).toBe(200);
    expect((await rawRequest(base, 'GET', '/api/instances', browser)).status).toBe(200);

    // Wrong passwords fill the login window too: the session still works, guesses do not.
    for (let i = 0; i < 10; i++) expect((await rawRequest(base, 'POST', '/api/auth/login', { origin: base }, { username: `nobody${i}`, password: 'wrong password' })).status).toBe(401);
    expect((await rawRequest(base, 'POST', '/api/auth/login', { origin: base }, { username: 'root', password: 'wrong password' })).status).toBe(429);
    expect((await rawRequest(base, 'GET', '/api/auth/session', browser)).status).toBe(200);
    expect((await rawRequest(base, 'GET', '/metrics', good)).status).toBe(200);
    expect((await rawRequest(base, 'GET', '/metrics', stale)).status).toBe(429);

    const stopped = await server.stop();
    expect(`${stopped.stdout}${stopped.stderr}`).not.toContain(made.body.token);
  });
});
