import { describe, expect, it } from 'vitest';
import { createHostNames, hostNameOf, nameMatches } from './host-check.js';

const interfaces = () =>
  ({
    lo: [{ address: '127.0.0.1', family: 'IPv4' }, { address: '::1', family: 'IPv6' }],
    eth0: [{ address: '192.0.2.10', family: 'IPv4' }, { address: '2001:db8::10', family: 'IPv6' }],
  }) as unknown as NodeJS.Dict<import('node:os').NetworkInterfaceInfo[]>;
const names = (host: string, extra: Partial<Parameters<typeof createHostNames>[0]> = {}) =>
  createHostNames({ host, publicOrigin: undefined, allowedHosts: [], tlsNames: undefined, ...extra }, { hostname: () => 'Fleet-Box', interfaces });

describe('the Host header', () => {
  it('is read as a host name: lower case, without port, brackets or final dot; anything else is not one', () => {
    expect(['localhost:3000', 'Fleet.LAN', 'fleet.lan.:443', '[::1]:3000', '[2001:DB8::1]', '192.0.2.7:8443'].map(hostNameOf)).toEqual([
      'localhost',
      'fleet.lan',
      'fleet.lan',
      '::1',
      '2001:db8::1',
      '192.0.2.7',
    ]);
    for (const bad of ['', 'evil.example;id', "x'$(id)'", 'a b', 'user@host', 'host:port', '[::1', '::1', 'host:123456']) expect(hostNameOf(bad), bad).toBeUndefined();
  });

  it('matches a certificate wildcard for exactly one label', () => {
    expect(nameMatches('fleet.example.lan', ['*.example.lan'])).toBe(true);
    expect(nameMatches('a.fleet.example.lan', ['*.example.lan'])).toBe(false);
    expect(nameMatches('example.lan', ['*.example.lan'])).toBe(false);
    expect(nameMatches('evilexample.lan', ['*.example.lan'])).toBe(false);
  });
});

describe('the names a server answers to', () => {
  it('on a loopback bind: loopback names only, plus the public origin, certificate names and FLEET_ALLOWED_HOSTS', () => {
    const ok = names('127.0.0.1', { publicOrigin: 'https://fleet.example.org:8443', allowedHosts: ['Box.Lan', '[2001:db8::9]'], tlsNames: ['*.example.lan', '192.0.2.50'] });
    for (const n of ['localhost', '127.0.0.1', '127.0.0.2', '::1', 'fleet.example.org', 'box.lan', '2001:db8::9', 'a.example.lan', '192.0.2.50']) expect(ok(n), n).toBe(true);
    for (const n of ['fleet-box', '192.0.2.10', 'evil.example', 'localhost.evil.example', '127.0.0.1.evil.example']) expect(ok(n), n).toBe(false);
  });

  it('on a wildcard bind: also the machine’s hostname, <hostname>.local and every interface address', () => {
    const ok = names('0.0.0.0');
    for (const n of ['fleet-box', 'fleet-box.local', '192.0.2.10', '2001:db8::10', 'localhost']) expect(ok(n), n).toBe(true);
    for (const n of ['evil.example', '192.0.2.11', 'fleet-box.evil.example']) expect(ok(n), n).toBe(false);
  });

  it('on one LAN address: that address and the hostname, not the other interfaces', () => {
    const ok = names('192.0.2.10');
    expect(['192.0.2.10', 'fleet-box', 'localhost'].map(ok)).toEqual([true, true, true]);
    expect(ok('2001:db8::10')).toBe(false);
  });
});
