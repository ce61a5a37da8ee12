import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { createApp } from '../app.js';
import { defaultConfig } from '../config.js';
import { addressesToOpen, createListener, refreshSelfSigned } from './listen.js';
import { prepareTls } from './setup.js';

afterAll(removeTempDbs);

const DAY = 86_400_000;
const lan = (address: string) => ({ eth0: [{ address, family: 'IPv4' }] }) as unknown as NodeJS.Dict<import('node:os').NetworkInterfaceInfo[]>;

/** The SHA-256 fingerprint of the certificate a TLS handshake with the server presents. */
async function presented(port: number): Promise<string> {
  const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false });
  await once(socket, 'secureConnect');
  const fingerprint = socket.getPeerCertificate().fingerprint256;
  socket.destroy();
  return fingerprint;
}

describe('a running server with a self-signed certificate', () => {
  it('lists the LAN addresses and hostname first among the https:// addresses to open', async () => {
    const setup = (await prepareTls(defaultConfig({ host: '0.0.0.0' }), { hostname: 'box', interfaces: lan('192.0.2.7') }))!;
    expect(addressesToOpen(setup, '0.0.0.0', 3000)).toEqual(['https://192.0.2.7:3000', 'https://box:3000', 'https://127.0.0.1:3000', 'https://localhost:3000']);
    expect(addressesToOpen(undefined, '::1', 3000)).toEqual(['http://[::1]:3000']);
    expect(addressesToOpen(undefined, 'fd00::7', 3000)).toEqual(['http://[fd00::7]:3000']);
    expect(addressesToOpen(undefined, '127.0.0.1', 3000)).toEqual(['http://127.0.0.1:3000']);
    expect(addressesToOpen(undefined, 'box.lan', 3000)).toEqual(['http://box.lan:3000']);
  });

  it('swaps in a renewed certificate without a restart; Origins and context.tls follow it', async () => {
    const config = defaultConfig({ host: '0.0.0.0', dbPath: tempDbPath() });
    const now = Date.now();
    const setup = (await prepareTls(config, { now, hostname: 'box', interfaces: lan('192.0.2.7') }))!;
    const homefleet = createApp({ config, tls: setup.info });
    const server = createListener(homefleet.app, setup).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const first = setup.info.fingerprint;
      expect(await presented(port)).toBe(first);
      expect(await refreshSelfSigned(server, config, setup, { now: now + DAY, hostname: 'box', interfaces: lan('192.0.2.7') })).toBeUndefined();
      expect(await presented(port)).toBe(first);

      // The machine got another address: the new certificate covers it, and so do the allowed Origins.
      const reason = await refreshSelfSigned(server, config, setup, { now: now + DAY, hostname: 'box', interfaces: lan('192.0.2.99') });
      expect(reason).toBe('it does not cover 192.0.2.99');
      expect(setup.info.fingerprint).not.toBe(first);
      expect(await presented(port)).toBe(setup.info.fingerprint);
      expect(homefleet.context.tls).toMatchObject({ fingerprint: setup.info.fingerprint, spkiPin: setup.info.spkiPin });
      expect(homefleet.context.config.tlsNames).toContain('192.0.2.99');
      const login = (origin: string) =>
        new Promise<number>((resolve, reject) => {
          const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => {
            socket.write(`POST /api/auth/login HTTP/1.1\r\nHost: localhost:${port}\r\nOrigin: ${origin}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
          });
          let text = '';
          socket.on('data', (c) => (text += c));
          socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1])));
          socket.on('error', reject);
        });
      expect(await login(`https://192.0.2.99:${port}`)).toBe(400); // past the Origin check: the body is invalid
      expect(await login(`https://192.0.2.200:${port}`)).toBe(403);
    } finally {
      server.closeAllConnections();
      server.close();
      await homefleet.close();
    }
  });
});
