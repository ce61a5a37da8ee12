import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// Attack review (issue 25): any Host was answered, on HTTPS and HTTP, and the installer then named
// `https://evil.example:3103`. Now a Host that is not one of the server's names gets 421. The test
// connects only to 127.0.0.1 and sends other names in the Host header.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-host-header-'));
const SETUP_TOKEN = 'host-header-setup-token';

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const misdirected = { status: 421, body: { error: 'misdirected request' } };
// Outside /api, a line of text.
const misdirectedText = { status: 421, body: 'misdirected request: this server does not answer to that host name\n' };
const answer = async (res: Promise<{ status: number; body: unknown }>) => {
  const { status, body } = await res;
  return { status, body };
};

describe('the Host header on plain HTTP (built server)', () => {
  it('answers loopback names, FLEET_PUBLIC_URL’s host and FLEET_ALLOWED_HOSTS; 421 to any other, also behind TRUST_PROXY', async () => {
    const server = await startHeadless({ DB_PATH: ':memory:', FLEET_PUBLIC_URL: 'https://fleet.example.org', FLEET_ALLOWED_HOSTS: 'fleet.lan', TRUST_PROXY: 'loopback' });
    const port = new URL(server.url).port;
    const get = (p: string, headers: Record<string, string>) => answer(rawRequest(server.url, 'GET', p, headers));
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost', 'fleet.example.org', 'FLEET.example.org:443', `fleet.lan:${port}`]) {
      expect((await get('/api/health', { host })).status, host).toBe(200);
    }
    for (const host of [`evil.example:${port}`, 'evil.example:3103', `localhost.evil.example:${port}`, `fleet.example.org.evil.example`, "x'$(id)'"]) {
      expect(await get('/api/health', { host }), host).toEqual(misdirected);
      expect(await get('/install/agent.sh', { host }), host).toEqual(misdirectedText);
    }
    expect(await get('/', { host: 'evil.example' })).toEqual(misdirectedText);
    // X-Forwarded-Host from the trusted proxy neither admits a Host nor names the server.
    expect(await get('/api/health', { host: 'evil.example', 'x-forwarded-host': 'fleet.example.org' })).toEqual(misdirected);
    const installer = await get('/install/agent.sh', { host: `127.0.0.1:${port}`, 'x-forwarded-host': 'evil.example:3103' });
    expect(installer.status).toBe(200);
    expect(installer.body).toContain('\nHOMEFLEET_SERVER_DEFAULT=https://fleet.example.org\n');
    expect(installer.body).not.toContain('evil.example');
    // The refused name is logged once, for a person to add it if it is theirs.
    // Log lines are written in batches: wait for the line rather than read at once.
    await expect.poll(() => server.log().filter((l) => l.level === 40 && l.host === 'evil.example').length).toBe(1);
    expect((await server.stop()).exitCode).toBe(0);
    expect(server.log().filter((l) => l.level === 40 && l.host === 'evil.example')).toHaveLength(1);
  });
});

describe('the Host header on built-in HTTPS (built server)', () => {
  it('answers the certificate’s names (machine name, addresses, FLEET_TLS_NAMES) and loopback names; 421 to any other', async () => {
    const dbPath = path.join(dir, 'tls', 'homefleet.db');
    const server = await startHeadless({ HOST: '0.0.0.0', DB_PATH: dbPath, FLEET_TLS_NAMES: 'fleet.lan', FLEET_SETUP_TOKEN: SETUP_TOKEN });
    const ca = fs.readFileSync(path.join(dir, 'tls', 'homefleet-tls.crt'), 'utf8');
    const port = new URL(server.url).port;
    const listening = server.log().find((l) => /listening on/.test(l.msg))!;
    const named = (listening.open as string[]).map((u) => new URL(u).host);
    expect(named).toContain(`${os.hostname().toLowerCase()}:${port}`);
    const get = (p: string, host: string) => answer(rawRequest(server.local, 'GET', p, { host }, undefined, { ca }));
    for (const host of [...named, `fleet.lan:${port}`, `${os.hostname()}.local:${port}`, `localhost:${port}`]) expect((await get('/api/health', host)).status, host).toBe(200);
    for (const host of [`evil.example:${port}`, 'evil.example:3103', `fleet.lan.evil.example:${port}`]) {
      expect(await get('/api/health', host), host).toEqual(misdirected);
      expect(await get('/install/agent.sh', host), host).toEqual(misdirectedText);
    }
    const cookie = await setUpAdmin(server.local, SETUP_TOKEN, ca);
    const evil = await rawRequest(server.local, 'POST', '/api/hosts/enrollment-tokens', { host: 'evil.example:3103', cookie, origin: server.local }, {}, { ca });
    expect({ status: evil.status, body: evil.body }).toEqual(misdirected);
    expect((await server.stop()).exitCode).toBe(0);
  });
});
