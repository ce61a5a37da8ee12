import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { defaultConfig, loadConfig, ConfigError } from '../config.js';
import { createSelfSigned } from './certificate.js';
import { prepareTls, selfSignedPaths, tlsMode, type TlsConfig } from './setup.js';

afterAll(removeTempDbs);

const NOW = Date.parse('2026-11-23T10:00:00.000Z');
const DAY = 86_400_000;
const lan = (address: string) => ({ eth0: [{ address, family: 'IPv4' }] }) as unknown as NodeJS.Dict<import('node:os').NetworkInterfaceInfo[]>;
const config = (over: Partial<TlsConfig>): TlsConfig => ({ ...defaultConfig(), ...over });

describe('when the server speaks HTTPS itself', () => {
  it.each([
    ['auto, loopback bind', { host: '127.0.0.1' }, undefined],
    ['auto, LAN bind', { host: '0.0.0.0' }, 'self-signed'],
    ['auto, LAN bind behind a proxy with a public URL', { host: '0.0.0.0', publicOrigin: 'https://fleet.example.org' }, undefined],
    ['auto, LAN bind with a trusted proxy', { host: '0.0.0.0', trustProxy: 'loopback' }, undefined],
    ['off, LAN bind', { host: '0.0.0.0', tls: 'off' }, undefined],
    ['on, loopback bind', { host: '127.0.0.1', tls: 'on' }, 'self-signed'],
    ['the user’s certificate, loopback bind', { host: '127.0.0.1', tlsCertFile: 'c', tlsKeyFile: 'k' }, 'user'],
    ['off with the user’s certificate', { host: '0.0.0.0', tls: 'off', tlsCertFile: 'c', tlsKeyFile: 'k' }, undefined],
  ] as const)('%s', (_name, over, expected) => {
    expect(tlsMode(config(over as Partial<TlsConfig>))).toBe(expected);
  });

  it('reads FLEET_TLS, FLEET_TLS_CERT/KEY (together only) and FLEET_TLS_NAMES from the environment', () => {
    expect(loadConfig({}).tls).toBe('auto');
    expect(loadConfig({ FLEET_TLS: 'off', FLEET_TLS_NAMES: 'fleet.lan, 10.0.0.5' })).toMatchObject({ tls: 'off', tlsExtraNames: ['fleet.lan', '10.0.0.5'] });
    expect(() => loadConfig({ FLEET_TLS: 'yes' })).toThrow('Invalid FLEET_TLS (got "yes"): must be auto, on or off');
    expect(() => loadConfig({ FLEET_TLS_CERT: '/x.pem' })).toThrow('Invalid FLEET_TLS_KEY: FLEET_TLS_CERT and FLEET_TLS_KEY must be set together');
  });
});

describe('the self-signed certificate beside the database', () => {
  it('is made on first start with mode 0600, then reused', async () => {
    const dbPath = tempDbPath();
    const c = config({ host: '0.0.0.0', dbPath });
    const first = (await prepareTls(c, { now: NOW, hostname: 'fleet-box', interfaces: lan('192.0.2.7') }))!;
    expect(first.info).toMatchObject({ selfSigned: true, names: ['127.0.0.1', '192.0.2.7', 'fleet-box', 'localhost'] });
    expect(first.renewed).toBeUndefined();
    const files = selfSignedPaths(dbPath)!;
    expect(first.certFile).toBe(files.cert);
    expect(fs.statSync(files.cert).mode & 0o777).toBe(0o600);
    expect(fs.statSync(files.key).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(files.key, 'utf8')).toBe(first.key);

    const again = (await prepareTls(c, { now: NOW + 100 * DAY, hostname: 'fleet-box', interfaces: lan('192.0.2.7') }))!;
    expect(again.info.fingerprint).toBe(first.info.fingerprint);
    expect(again.renewed).toBeUndefined();
  });

  it('is renewed when the machine’s address changed, when it nears expiry, or when its key is not its own', async () => {
    const dbPath = tempDbPath();
    const c = config({ host: '0.0.0.0', dbPath });
    const first = (await prepareTls(c, { now: NOW, hostname: 'box', interfaces: lan('192.0.2.7') }))!;

    const moved = (await prepareTls(c, { now: NOW, hostname: 'box', interfaces: lan('192.0.2.8') }))!;
    expect(moved.renewed).toBe('it does not cover 192.0.2.8');
    expect(moved.info.fingerprint).not.toBe(first.info.fingerprint);
    expect(moved.info.names).toContain('192.0.2.8');

    const late = (await prepareTls(c, { now: NOW + 370 * DAY, hostname: 'box', interfaces: lan('192.0.2.8') }))!;
    expect(late.renewed).toBe('it expires within 30 days');

    const other = (await createSelfSigned(['x'], NOW, 'x')).key;
    fs.writeFileSync(selfSignedPaths(dbPath)!.key, other);
    const mismatched = (await prepareTls(c, { now: NOW + 370 * DAY, hostname: 'box', interfaces: lan('192.0.2.8') }))!;
    expect(mismatched.renewed).toBe('its key does not match');
    expect(mismatched.key).toBe(other);
  });

  it('is re-issued with the key it had, so the public-key pin agents hold stays the same', async () => {
    const dbPath = tempDbPath();
    const c = config({ host: '0.0.0.0', dbPath });
    const first = (await prepareTls(c, { now: NOW, hostname: 'box', interfaces: lan('192.0.2.7') }))!;
    const reissued = [
      await prepareTls({ ...c, tlsExtraNames: ['fleet.lan'] }, { now: NOW, hostname: 'box', interfaces: lan('192.0.2.7') }),
      await prepareTls(c, { now: NOW, hostname: 'box', interfaces: lan('192.0.2.8') }),
      await prepareTls(c, { now: NOW + 370 * DAY, hostname: 'box', interfaces: lan('192.0.2.8') }),
    ];
    expect(reissued.map((r) => r!.renewed)).toEqual(['it does not cover fleet.lan', 'it does not cover 192.0.2.8', 'it expires within 30 days']);
    for (const r of reissued) {
      expect(r!.info.fingerprint).not.toBe(first.info.fingerprint);
      expect(r!.info.spkiPin).toBe(first.info.spkiPin);
      expect(r!.key).toBe(first.key);
    }
    expect(fs.readFileSync(selfSignedPaths(dbPath)!.key, 'utf8')).toBe(first.key);

    // A key file that is not a P-256 key (or is gone) gets a new key.
    fs.rmSync(selfSignedPaths(dbPath)!.key);
    const fresh = (await prepareTls(c, { now: NOW + 370 * DAY, hostname: 'box', interfaces: lan('192.0.2.8') }))!;
    expect(fresh.info.spkiPin).not.toBe(first.info.spkiPin);
  });

  it('is kept in memory only for an in-memory database', async () => {
    const made = (await prepareTls(config({ host: '0.0.0.0', dbPath: ':memory:' }), { now: NOW, hostname: 'box', interfaces: lan('192.0.2.7') }))!;
    expect(made.certFile).toBeUndefined();
    expect(made.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
  });
});

describe('the user’s own certificate', () => {
  it('is served as given; a missing file or a key of another certificate stops the start naming the variable', async () => {
    const dir = tempDbPath('x').replace(/\/x$/, '');
    const mine = await createSelfSigned(['fleet.example.lan', '*.example.lan'], NOW, 'mine');
    const other = await createSelfSigned(['other'], NOW, 'other');
    fs.writeFileSync(`${dir}/c.pem`, mine.cert);
    fs.writeFileSync(`${dir}/k.pem`, mine.key);
    fs.writeFileSync(`${dir}/other.pem`, other.key);
    const base = { host: '127.0.0.1', dbPath: `${dir}/db` };
    const used = (await prepareTls(config({ ...base, tlsCertFile: `${dir}/c.pem`, tlsKeyFile: `${dir}/k.pem` })))!;
    expect(used).toMatchObject({ cert: mine.cert, key: mine.key, info: { selfSigned: false, names: ['*.example.lan', 'fleet.example.lan'] } });
    expect(fs.existsSync(selfSignedPaths(base.dbPath)!.cert)).toBe(false);

    await expect(prepareTls(config({ ...base, tlsCertFile: `${dir}/none.pem`, tlsKeyFile: `${dir}/k.pem` }))).rejects.toThrow(
      new ConfigError(`Invalid FLEET_TLS_CERT (got "${dir}/none.pem"): no such file`),
    );
    await expect(prepareTls(config({ ...base, tlsCertFile: `${dir}/c.pem`, tlsKeyFile: `${dir}/other.pem` }))).rejects.toThrow(
      `Invalid FLEET_TLS_KEY (got "${dir}/other.pem"): it is not the key of FLEET_TLS_CERT`,
    );
    await expect(prepareTls(config({ ...base, tlsCertFile: `${dir}/k.pem`, tlsKeyFile: `${dir}/k.pem` }))).rejects.toThrow('not a PEM certificate');
  });
});
