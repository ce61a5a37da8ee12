import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSelfSigned, describeCertificate, renewalReason } from './certificate.js';
import { certificateNames, httpsOrigins, isLoopbackHost } from './names.js';

const NOW = Date.parse('2026-11-23T10:00:00.000Z');

/** A GET over TLS that trusts only `ca` and checks the server's name the way browsers do. */
function getWithCa(port: number, servername: string, ca: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/', servername, ca, headers: { host: servername } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('self-signed certificate', () => {
  it('is ECDSA P-256, covers exactly the names given, and a TLS client that trusts it verifies those names', async () => {
    const { cert, key } = await createSelfSigned(['127.0.0.1', 'fleet.test', 'localhost'], Date.now(), 'homefleet on test');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-cert-'));
    fs.writeFileSync(path.join(dir, 'c.pem'), cert);
    const text = (await execa('openssl', ['x509', '-in', path.join(dir, 'c.pem'), '-noout', '-text'])).stdout;
    fs.rmSync(dir, { recursive: true, force: true });
    expect(text).toContain('ASN1 OID: prime256v1');
    expect(text).toContain('ecdsa-with-SHA256');
    expect(text).toMatch(/DNS:fleet\.test/);
    expect(text).toMatch(/IP Address:127\.0\.0\.1/);
    expect(text).toContain('TLS Web Server Authentication');
    expect(text).toMatch(/CA:FALSE/);

    const server = https.createServer({ cert, key }, (_req, res) => res.end('hello'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      expect(await getWithCa(port, 'fleet.test', cert)).toEqual({ status: 200, body: 'hello' });
      expect(await getWithCa(port, 'localhost', cert)).toEqual({ status: 200, body: 'hello' });
      await expect(getWithCa(port, 'other.test', cert)).rejects.toThrow(/altnames|Hostname/i);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('describes its fingerprint as browsers show it and the public-key pin curl takes', async () => {
    const { cert } = await createSelfSigned(['localhost'], NOW, 'x');
    const facts = describeCertificate(cert);
    expect(facts.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(facts.spkiPin).toMatch(/^sha256\/\/[A-Za-z0-9+/]{43}=$/);
    expect(facts.names).toEqual(['localhost']);
    expect(facts.notAfter).toBe(NOW + 398 * 24 * 3600 * 1000);
    // openssl computes the same fingerprint.
    const out = await execa('openssl', ['x509', '-noout', '-fingerprint', '-sha256'], { input: cert });
    expect(out.stdout.replace(/^sha256 Fingerprint=/i, '')).toBe(facts.fingerprint);
  });

  it('is renewed when fewer than 30 days remain or a needed name is missing', async () => {
    const facts = describeCertificate((await createSelfSigned(['localhost', '10.1.2.3'], NOW, 'x')).cert);
    expect(renewalReason(facts, ['localhost', '10.1.2.3'], NOW)).toBeUndefined();
    expect(renewalReason(facts, ['localhost'], NOW + 300 * 86_400_000)).toBeUndefined();
    expect(renewalReason(facts, ['localhost'], NOW + 369 * 86_400_000)).toBe('it expires within 30 days');
    expect(renewalReason(facts, ['localhost', '10.1.2.4'], NOW)).toBe('it does not cover 10.1.2.4');
  });
});

describe('names and origins', () => {
  const interfaces = {
    lo: [{ address: '127.0.0.1', family: 'IPv4' }, { address: '::1', family: 'IPv6' }],
    eth0: [{ address: '192.0.2.10', family: 'IPv4' }, { address: 'fe80::1', family: 'IPv6' }, { address: '2001:db8::10', family: 'IPv6' }],
  } as unknown as NodeJS.Dict<import('node:os').NetworkInterfaceInfo[]>;

  it('a wildcard bind covers the hostname, localhost and every interface address', () => {
    expect(certificateNames({ host: '0.0.0.0', hostname: 'Fleet-Box', interfaces })).toEqual(['127.0.0.1', '192.0.2.10', 'fleet-box', 'localhost']);
    expect(certificateNames({ host: '::', hostname: 'fleet-box', interfaces })).toEqual(['127.0.0.1', '192.0.2.10', '2001:db8::10', '::1', 'fleet-box', 'localhost']);
  });

  it('a single-address bind covers that address, plus the extra names', () => {
    expect(certificateNames({ host: '192.0.2.10', hostname: 'box', interfaces, extra: ['fleet.lan', '[2001:db8::9]'] })).toEqual([
      '127.0.0.1',
      '192.0.2.10',
      '2001:db8::9',
      'box',
      'fleet.lan',
      'localhost',
    ]);
  });

  it('origins are https://<name>:<port>, IPv6 in brackets, wildcards left out', () => {
    expect(httpsOrigins(['localhost', '::1', '*.lan', '127.0.0.1'], 8443)).toEqual(['https://localhost:8443', 'https://[::1]:8443', 'https://127.0.0.1:8443']);
  });

  it('loopback binds are 127.0.0.0/8, ::1 and localhost', () => {
    expect(['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '192.0.2.1', '128.0.0.1', 'fleet.lan'].some(isLoopbackHost)).toBe(false);
  });
});
