import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('configuration', () => {
  it('snapshots: daily and 7 kept by default; hours (decimals too), 0 or off; bad values name the variable', () => {
    expect(loadConfig({})).toMatchObject({ snapshotIntervalHours: 24, snapshotKeep: 7 });
    expect(loadConfig({ FLEET_SNAPSHOT_INTERVAL_HOURS: '6', FLEET_SNAPSHOT_KEEP: '30' })).toMatchObject({ snapshotIntervalHours: 6, snapshotKeep: 30 });
    expect(loadConfig({ FLEET_SNAPSHOT_INTERVAL_HOURS: '0.5' }).snapshotIntervalHours).toBe(0.5);
    for (const off of ['0', 'off', 'OFF']) expect(loadConfig({ FLEET_SNAPSHOT_INTERVAL_HOURS: off }).snapshotIntervalHours).toBe(0);
    for (const bad of ['-1', 'daily', '1e3', '9000', '0.1']) {
      expect(() => loadConfig({ FLEET_SNAPSHOT_INTERVAL_HOURS: bad }), bad).toThrow(/^Invalid FLEET_SNAPSHOT_INTERVAL_HOURS/);
    }
    for (const bad of ['0', '1.5', 'all', '1001']) expect(() => loadConfig({ FLEET_SNAPSHOT_KEEP: bad }), bad).toThrow(/^Invalid FLEET_SNAPSHOT_KEEP/);
  });

  it('the agents’ heartbeat interval: 30 s by default, 1 to 3600; a bad value names the variable', () => {
    expect(loadConfig({}).heartbeatIntervalS).toBe(30);
    expect(loadConfig({ FLEET_HEARTBEAT_INTERVAL_S: '5' }).heartbeatIntervalS).toBe(5);
    for (const bad of ['0', '3601', '1.5', 'fast']) expect(() => loadConfig({ FLEET_HEARTBEAT_INTERVAL_S: bad }), bad).toThrow(/^Invalid FLEET_HEARTBEAT_INTERVAL_S/);
  });

  it('the file cache: uploads up to 16 GiB, 50 GiB cached by default; bytes or KiB to TiB; a bad value names the variable', () => {
    expect(loadConfig({})).toMatchObject({ uploadMaxBytes: 16 * 2 ** 30, fileCacheMaxBytes: 50 * 2 ** 30 });
    expect(loadConfig({ FLEET_UPLOAD_MAX_BYTES: '1048576', FLEET_FILE_CACHE_MAX_BYTES: '2TiB' })).toMatchObject({ uploadMaxBytes: 2 ** 20, fileCacheMaxBytes: 2 * 2 ** 40 });
    expect(loadConfig({ FLEET_UPLOAD_MAX_BYTES: '512 MiB' }).uploadMaxBytes).toBe(512 * 2 ** 20);
    for (const bad of ['0', '-1', '1.5GiB', '16GB', '16g', 'lots', '99999999999999999']) {
      expect(() => loadConfig({ FLEET_UPLOAD_MAX_BYTES: bad }), bad).toThrow(/^Invalid FLEET_UPLOAD_MAX_BYTES \(got .*\): must be a number of bytes/);
    }
    expect(() => loadConfig({ FLEET_FILE_CACHE_MAX_BYTES: '8192TiB' })).toThrow(/^Invalid FLEET_FILE_CACHE_MAX_BYTES/);
  });

  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dbPath: './data/homefleet.db',
      logLevel: 'info',
      authAllowHttp: false,
      publicOrigin: undefined,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DB_PATH: ':memory:',
      LOG_LEVEL: 'warn',
      FLEET_PUBLIC_URL: 'https://fleet.example.org/',
      FLEET_AUTH_ALLOW_HTTP: 'true',
      FLEET_TELEMETRY_TOKEN: 'x'.repeat(32),
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      dbPath: ':memory:',
      logLevel: 'warn',
      publicOrigin: 'https://fleet.example.org',
      authAllowHttp: true,
      telemetryToken: 'x'.repeat(32),
    });
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid PORT (got "abc"): must be a port number from 0 to 65535'],
    [{ PORT: '70000' }, 'Invalid PORT (got "70000"): must be a port number from 0 to 65535'],
    [{ PORT: ' 80' }, 'Invalid PORT (got " 80"): must be a port number from 0 to 65535'],
    [{ LOG_LEVEL: 'INFO' }, 'Invalid LOG_LEVEL (got "INFO"): Invalid option: expected one of "fatal"|"error"|"warn"|"info"|"debug"|"trace"|"silent"|""'],
    [{ FLEET_AUTH_ALLOW_HTTP: 'yes' }, 'Invalid FLEET_AUTH_ALLOW_HTTP (got "yes"): Invalid option: expected one of "0"|"1"|"true"|"false"|""'],
    [{ FLEET_TLS: 'ON' }, 'Invalid FLEET_TLS (got "ON"): must be auto, on or off'],
    [{ FLEET_SNAPSHOT_INTERVAL_HOURS: '8761' }, 'Invalid FLEET_SNAPSHOT_INTERVAL_HOURS (got "8761"): must be at most 8760 hours (a year)'],
    [{ FLEET_SNAPSHOT_INTERVAL_HOURS: '0.2' }, 'Invalid FLEET_SNAPSHOT_INTERVAL_HOURS (got "0.2"): must be at least 0.25 hours (15 minutes), or 0 or off'],
    [{ PORT: 'x', LOG_LEVEL: 'loud' }, 'Invalid PORT'],
    [{ LOG_LEVEL: 'loud' }, 'Invalid LOG_LEVEL'],
    [{ FLEET_PUBLIC_URL: 'fleet.example.org' }, 'Invalid FLEET_PUBLIC_URL'],
    [{ ORIGIN: 'https://fleet.example.org/path' }, 'Invalid ORIGIN'],
    [{ FLEET_PUBLIC_URL: 'http://192.0.2.2:3901' }, 'Invalid FLEET_PUBLIC_URL (got "http://192.0.2.2:3901"): must be an https:// origin'],
    [{ ORIGIN: 'http://fleet.example.org' }, 'Invalid ORIGIN (got "http://fleet.example.org"): must be an https:// origin'],
    [{ FLEET_PUBLIC_URL: 'http://localhost:3000', FLEET_AUTH_ALLOW_HTTP: 'true' }, 'Invalid FLEET_PUBLIC_URL'],
    [{ FLEET_PUBLIC_URL: 'ftp://fleet.example.org' }, 'Invalid FLEET_PUBLIC_URL'],
  ])('rejects %j with one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
    try {
      loadConfig(env);
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('takes only a plain https origin: a name or address, an optional port and trailing slash', () => {
    for (const good of ['https://fleet.example.org', 'https://fleet.example.org/', 'https://FLEET-1.lan:8443', 'https://192.0.2.7:3103', 'https://[2001:db8::7]:8443', 'https://box']) {
      expect(loadConfig({ FLEET_PUBLIC_URL: good }).publicOrigin, good).toBe(good.replace(/\/$/, ''));
    }
    const bad = [
      "https://fleet.example.org';touch /tmp/PWNED;'",
      'https://fleet.example.org;id',
      'https://$(id).example.org',
      'https://fleet.example.org:8443$HOME',
      'https://user:pw@fleet.example.org',
      'https://fleet.example.org/path',
      'https://fleet.example.org?x=1',
      'https://fleet.example.org#x',
      'https://fleet example.org',
      'https://-fleet.example.org',
      'https://fleet..example.org',
      'https://fleet.example.org:0',
      'https://fleet.example.org:70000',
      'https://999.1.1.1',
      'https://[2001:db8::zz]',
      'https://[::1]]',
      'https://fleet.example.org//',
      'https://',
      'https://fleet_x.example.org',
    ];
    for (const value of bad) {
      for (const name of ['FLEET_PUBLIC_URL', 'ORIGIN']) expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(`Invalid ${name}`);
    }
  });

  it('reads FLEET_ALLOWED_HOSTS as names or addresses without ports', () => {
    expect(loadConfig({}).allowedHosts).toEqual([]);
    expect(loadConfig({ FLEET_ALLOWED_HOSTS: 'fleet.lan, 192.0.2.7 [2001:db8::1]' }).allowedHosts).toEqual(['fleet.lan', '192.0.2.7', '[2001:db8::1]']);
    for (const bad of ['http://fleet.lan', 'fleet.lan:8443', 'fleet.lan/x', "fleet';id"]) {
      expect(() => loadConfig({ FLEET_ALLOWED_HOSTS: bad }), bad).toThrow(/^Invalid FLEET_ALLOWED_HOSTS .*must be host names or addresses/);
    }
  });

  it('accepts an https:// origin with a port', () => {
    expect(loadConfig({ ORIGIN: 'https://fleet.example.org:8443' }).publicOrigin).toBe('https://fleet.example.org:8443');
  });

  it('never echoes a rejected token value', () => {
    expect(() => loadConfig({ FLEET_TELEMETRY_TOKEN: 'short-secret-value' })).toThrow(
      'Invalid FLEET_TELEMETRY_TOKEN: must be at least 32 characters',
    );
  });

  it('single sign-on: the FLEET_OIDC_* variables as a set, with defaults; a partial or bad set names the variable, never the secret', () => {
    const oidc = { FLEET_OIDC_ISSUER: 'https://auth.example.org/application/o/homefleet/', FLEET_OIDC_CLIENT_ID: 'homefleet', FLEET_OIDC_ROLE_MAP: 'admins=administrator, ops=operator,*=viewer' };
    expect(loadConfig({}).oidc).toBeUndefined();
    expect(loadConfig({}).require2fa).toBe('off');
    const config = loadConfig({ ...oidc, FLEET_OIDC_CLIENT_SECRET: 'the client secret', FLEET_REQUIRE_2FA: 'administrators' });
    expect(config.require2fa).toBe('administrators');
    expect(config.oidc).toMatchObject({ issuer: oidc.FLEET_OIDC_ISSUER, clientId: 'homefleet', clientSecret: 'the client secret', scopes: 'openid profile email', roleClaim: 'groups', name: 'single sign-on', only: false });
    expect([...config.oidc!.roleMap.values]).toEqual([['admins', 'administrator'], ['ops', 'operator']]);
    expect(config.oidc!.roleMap.fallback).toBe('viewer');
    expect(loadConfig({ ...oidc, FLEET_OIDC_ROLE_CLAIM: 'realm_access.roles', FLEET_OIDC_ONLY: 'true', FLEET_OIDC_NAME: 'Keycloak' }).oidc).toMatchObject({ roleClaim: 'realm_access.roles', only: true, name: 'Keycloak' });
    // Plain http only for a provider on a loopback address.
    expect(loadConfig({ ...oidc, FLEET_OIDC_ISSUER: 'http://127.0.0.1:9000' }).oidc?.issuer).toBe('http://127.0.0.1:9000');
    expect(() => loadConfig({ ...oidc, FLEET_OIDC_ISSUER: 'http://auth.example.org' })).toThrow(/^Invalid FLEET_OIDC_ISSUER/);
    expect(() => loadConfig({ FLEET_OIDC_CLIENT_ID: 'homefleet' })).toThrow(/^Invalid FLEET_OIDC_ISSUER: must be set when FLEET_OIDC_CLIENT_ID is/);
    expect(() => loadConfig({ ...oidc, FLEET_OIDC_CLIENT_ID: '' })).toThrow(/^Invalid FLEET_OIDC_CLIENT_ID/);
    expect(() => loadConfig({ ...oidc, FLEET_OIDC_ROLE_MAP: '' })).toThrow(/^Invalid FLEET_OIDC_ROLE_MAP/);
    for (const bad of ['admins', 'admins=root', '*=viewer,*=operator', 'a=viewer,a=operator', '=viewer']) {
      expect(() => loadConfig({ ...oidc, FLEET_OIDC_ROLE_MAP: bad }), bad).toThrow(/^Invalid FLEET_OIDC_ROLE_MAP .*must be claim-value=role pairs/);
    }
    expect(() => loadConfig({ ...oidc, FLEET_OIDC_SCOPES: 'profile email' })).toThrow(/^Invalid FLEET_OIDC_SCOPES/);
    expect(() => loadConfig({ FLEET_REQUIRE_2FA: 'admins' })).toThrow(/^Invalid FLEET_REQUIRE_2FA/);
    const secret = 'bad secret \u0001 value';
    expect(() => loadConfig({ ...oidc, FLEET_OIDC_CLIENT_SECRET: secret })).toThrow('Invalid FLEET_OIDC_CLIENT_SECRET: must be 1 to 1024 printable ASCII characters');
  });
});
