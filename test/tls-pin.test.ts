import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, signIn, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// Issue 25: restarting with another FLEET_TLS_NAMES (or an address change, or the renewal 30 days
// before expiry) made a new key, so every enrolled agent's pin failed.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-tls-pin-'));
const SETUP_TOKEN = 'tls-pin-setup-token';

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the self-signed certificate (built server)', () => {
  it('a certificate re-issued for other FLEET_TLS_NAMES keeps its key: the pin in install commands stays the same', async () => {
    const dbPath = path.join(dir, 'pin', 'homefleet.db');
    const env = { HOST: '127.0.0.1', FLEET_TLS: 'on', DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN };
    const certFile = path.join(dir, 'pin', 'homefleet-tls.crt');
    const pinOf = async (base: string, cookie: string, ca: string) => {
      const made = await rawRequest(base, 'POST', '/api/hosts/enrollment-tokens', { cookie, origin: base }, {}, { ca });
      expect(made.status).toBe(201);
      return / --fingerprint (\S+)$/.exec(made.body.install_command)![1]!;
    };
    const first = await startHeadless({ ...env, FLEET_TLS_NAMES: 'fleet.lan' });
    const firstCa = fs.readFileSync(certFile, 'utf8');
    const pin = await pinOf(first.local, await setUpAdmin(first.local, SETUP_TOKEN, firstCa), firstCa);
    const facts = await first.logLine((l) => l.spki_pin);
    expect(`sha256//${pin}`).toBe(facts.spki_pin);
    expect((await first.stop()).exitCode).toBe(0);

    const second = await startHeadless({ ...env, FLEET_TLS_NAMES: 'fleet.lan,fleet.example.lan' });
    const secondCa = fs.readFileSync(certFile, 'utf8');
    expect(secondCa).not.toBe(firstCa);
    const renewed = await second.logLine((l) => l.spki_pin);
    expect(renewed.fingerprint).not.toBe(facts.fingerprint);
    expect(renewed.spki_pin).toBe(facts.spki_pin);
    expect(await pinOf(second.local, await signIn(second.local, secondCa), secondCa)).toBe(pin);
    expect((await second.stop()).exitCode).toBe(0);
  });
});
