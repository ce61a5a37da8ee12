import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, type Config } from '../config.js';
import type { TlsInfo } from '../context.js';
import type { CertificateFacts } from './certificate.js';
import { certificateNames, isLoopbackHost } from './names.js';
import { makePrivateDir } from '../private-files.js';

export type { TlsInfo };

export interface TlsSetup {
  cert: string;
  key: string;
  info: TlsInfo;
  /** Where the self-signed certificate is kept (undefined for an in-memory database or the user's own). */
  certFile?: string;
  /** Set when a stored self-signed certificate was replaced, saying why. */
  renewed?: string;
}

export type TlsConfig = Pick<Config, 'tls' | 'tlsCertFile' | 'tlsKeyFile' | 'tlsExtraNames' | 'host' | 'publicOrigin' | 'trustProxy' | 'dbPath'>;

/**
 * Whether the server speaks HTTPS itself, and with whose certificate. `auto` (the default) serves a
 * self-signed certificate only where nothing else can protect logins: a non-loopback bind with no
 * public URL or trusted proxy in front. The user's own certificate is used whenever it is given.
 */
export function tlsMode(config: TlsConfig): 'user' | 'self-signed' | undefined {
  if (config.tls === 'off') return undefined;
  if (config.tlsCertFile) return 'user';
  if (config.tls === 'on') return 'self-signed';
  if (isLoopbackHost(config.host) || config.publicOrigin || config.trustProxy) return undefined;
  return 'self-signed';
}

/** The self-signed certificate and key beside the database. */
export function selfSignedPaths(dbPath: string): { cert: string; key: string } | undefined {
  if (dbPath === ':memory:') return undefined;
  const dir = path.dirname(path.resolve(dbPath));
  return { cert: path.join(dir, 'homefleet-tls.crt'), key: path.join(dir, 'homefleet-tls.key') };
}

function keyMatches(cert: string, key: string): boolean {
  const fromCert = new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' });
  const fromKey = createPublicKey(createPrivateKey(key)).export({ type: 'spki', format: 'der' });
  return Buffer.compare(fromCert, fromKey) === 0;
}

function writePrivate(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

function readUserFile(variable: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`Invalid ${variable} (got ${JSON.stringify(file)}): ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'cannot be read'}`);
  }
}

export interface TlsDeps {
  now?: number;
  hostname?: string;
  interfaces?: NodeJS.Dict<os.NetworkInterfaceInfo[]>;
}

/** Loads the user's certificate, or loads, renews or makes the self-signed one; undefined for plain HTTP. */
export async function prepareTls(config: TlsConfig, deps: TlsDeps = {}): Promise<TlsSetup | undefined> {
  const mode = tlsMode(config);
  if (!mode) return undefined;
  // Loaded only when TLS is used: the X.509 library is most of the server's start-up cost otherwise.
  const { createSelfSigned, describeCertificate, renewalReason } = await import('./certificate.js');

  if (mode === 'user') {
    const cert = readUserFile('FLEET_TLS_CERT', config.tlsCertFile!);
    const key = readUserFile('FLEET_TLS_KEY', config.tlsKeyFile!);
    let facts: CertificateFacts;
    try {
      facts = describeCertificate(cert);
    } catch {
      throw new ConfigError(`Invalid FLEET_TLS_CERT (got ${JSON.stringify(config.tlsCertFile)}): not a PEM certificate`);
    }
    let matches = false;
    try {
      matches = keyMatches(cert, key);
    } catch {
      throw new ConfigError(`Invalid FLEET_TLS_KEY (got ${JSON.stringify(config.tlsKeyFile)}): not a PEM private key`);
    }
    if (!matches) throw new ConfigError(`Invalid FLEET_TLS_KEY (got ${JSON.stringify(config.tlsKeyFile)}): it is not the key of FLEET_TLS_CERT`);
    return { cert, key, info: { selfSigned: false, fingerprint: facts.fingerprint, spkiPin: facts.spkiPin, names: facts.names, notAfter: facts.notAfter } };
  }

  const now = deps.now ?? Date.now();
  const hostname = deps.hostname ?? os.hostname();
  const names = certificateNames({ host: config.host, hostname, interfaces: deps.interfaces ?? os.networkInterfaces(), extra: config.tlsExtraNames });
  const files = selfSignedPaths(config.dbPath);
  let renewed: string | undefined;
  let keptKey: string | undefined;
  try {
    if (files) keptKey = fs.readFileSync(files.key, 'utf8');
  } catch {
    // none yet, or unreadable: a new key
  }
  if (files && keptKey !== undefined && fs.existsSync(files.cert)) {
    try {
      const cert = fs.readFileSync(files.cert, 'utf8');
      const key = keptKey;
      const facts = describeCertificate(cert);
      renewed = keyMatches(cert, key) ? renewalReason(facts, names, now) : 'its key does not match';
      if (!renewed) return { cert, key, certFile: files.cert, info: { selfSigned: true, fingerprint: facts.fingerprint, spkiPin: facts.spkiPin, names: facts.names, notAfter: facts.notAfter } };
    } catch {
      renewed = 'it could not be read';
    }
  }
  // The key is kept: every agent pinned its public key, and a new one would break them all.
  const made = await createSelfSigned(names, now, `homefleet on ${hostname}`, keptKey);
  if (files) {
    makePrivateDir(path.dirname(files.cert));
    // Key first: a crash between the two leaves a certificate without its key, which is made again next start.
    writePrivate(files.key, made.key);
    writePrivate(files.cert, made.cert);
  }
  const facts = describeCertificate(made.cert);
  return { ...made, certFile: files?.cert, renewed, info: { selfSigned: true, fingerprint: facts.fingerprint, spkiPin: facts.spkiPin, names: facts.names, notAfter: facts.notAfter } };
}
