import http from 'node:http';
import type https from 'node:https';
import net from 'node:net';
import type { Express } from 'express';
import { builtin } from '../builtin.js';
import { expressServerOptions } from '../http/server.js';
import { httpsOrigins } from './names.js';
import { prepareTls, type TlsConfig, type TlsDeps, type TlsSetup } from './setup.js';

/**
 * `https.createServer` with the certificate when the server speaks HTTPS itself, else plain `http`;
 * either way with the app's request and response prototypes (see expressServerOptions).
 */
export function createListener(app: Express, tls: TlsSetup | undefined): http.Server {
  const options = expressServerOptions(app);
  if (!tls) return http.createServer(options, app);
  // Loaded here, not imported: a plain-HTTP server (the desktop app, a server behind a proxy) never
  // loads Node's TLS stack (0.3 MB of its idle memory).
  return builtin('node:https').createServer({ ...options, cert: tls.cert, key: tls.key }, app);
}

/**
 * The addresses a person should open, best first: for HTTPS every name the certificate covers
 * (the machine's LAN addresses and hostname before localhost and 127.0.0.1); for plain HTTP the bind address.
 */
export function addressesToOpen(tls: TlsSetup | undefined, host: string, port: number): string[] {
  // A colon means an IPv6 literal (no host name has one). Not net.isIPv6: compiling Node's IPv6
  // pattern takes 0.5 MB of working memory that the process keeps (malloc does not hand it back).
  if (!tls) return [`http://${host.includes(':') ? `[${host}]` : host}:${port}`];
  const loopback = (n: string) => n === 'localhost' || n === '::1' || n.startsWith('127.');
  const ranked = [...tls.info.names].sort((a, b) => Number(loopback(a)) - Number(loopback(b)) || Number(net.isIP(b) === 4) - Number(net.isIP(a) === 4));
  return httpsOrigins(ranked, port);
}

/**
 * Checks the self-signed certificate again (expiry, addresses) and, when it was renewed, swaps it
 * into the running server and updates the facts in place, so the allowed Origins and `context.tls`
 * follow. Returns the reason it was renewed, or undefined.
 */
export async function refreshSelfSigned(server: http.Server, config: TlsConfig, setup: TlsSetup, deps: TlsDeps = {}): Promise<string | undefined> {
  if (!setup.info.selfSigned) return undefined;
  const next = await prepareTls(config, deps);
  if (!next || next.info.fingerprint === setup.info.fingerprint) return undefined;
  (server as https.Server).setSecureContext({ cert: next.cert, key: next.key });
  setup.cert = next.cert;
  setup.key = next.key;
  setup.info.names.splice(0, setup.info.names.length, ...next.info.names);
  Object.assign(setup.info, { fingerprint: next.info.fingerprint, spkiPin: next.info.spkiPin });
  return next.renewed ?? 'it changed';
}
