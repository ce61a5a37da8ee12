// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API loaded first.
import 'reflect-metadata';
import { createHash, createPrivateKey, createPublicKey, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import net from 'node:net';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/** A self-signed certificate lives 398 days and is renewed when fewer than 30 remain. */
export const LIFETIME_DAYS = 398;
export const RENEW_BEFORE_DAYS = 30;

export interface KeyAndCertificate {
  cert: string;
  key: string;
}

/** What a person compares with the browser, and what `curl --pinnedpubkey` takes. */
export interface CertificateFacts {
  /** SHA-256 of the certificate (DER), `AB:CD:…` as browsers show it. */
  fingerprint: string;
  /** `sha256//<base64>` of the public key (SPKI), for `curl --pinnedpubkey`. */
  spkiPin: string;
  /** DNS names and IP addresses of its subject alternative names, lower case. */
  names: string[];
  notAfter: number;
}

/** The ECDSA P-256 key pair of a PKCS#8 PEM private key, or undefined when it is not one. */
async function importKeyPair(pem: string): Promise<CryptoKeyPair | undefined> {
  try {
    const privateKey = createPrivateKey(pem);
    if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return undefined;
    const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'der' });
    const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
    return {
      privateKey: (await webcrypto.subtle.importKey('pkcs8', pkcs8, ECDSA, true, ['sign'])) as unknown as CryptoKey,
      publicKey: (await webcrypto.subtle.importKey('spki', spki, ECDSA, true, ['verify'])) as unknown as CryptoKey,
    };
  } catch {
    return undefined;
  }
}

/**
 * A self-signed server certificate for the names (DNS names or IP addresses), and its ECDSA P-256 key:
 * `keyPem` when that is such a key, else a new one. Agents pin the public key (`--pinnedpubkey`), so a
 * certificate re-issued for new names or a new year with the same key keeps every pin working.
 */
export async function createSelfSigned(names: readonly string[], now: number, label: string, keyPem?: string): Promise<KeyAndCertificate> {
  const kept = keyPem === undefined ? undefined : await importKeyPair(keyPem);
  const keys = kept ?? ((await webcrypto.subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as unknown as CryptoKeyPair);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01' + randomBytes(15).toString('hex'),
    name: [{ CN: [label.slice(0, 64)] }, { O: ['homefleet (self-signed)'] }],
    notBefore: new Date(now - 60 * 60 * 1000),
    notAfter: new Date(now + LIFETIME_DAYS * DAY_MS),
    signingAlgorithm: ECDSA,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: (net.isIP(value) ? 'ip' : 'dns') as 'ip' | 'dns', value }))),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
  return { cert: cert.toString('pem') + '\n', key };
}

/** Fingerprint, public-key pin, covered names and expiry of a PEM certificate (throws on a bad one). */
export function describeCertificate(pem: string): CertificateFacts {
  const cert = new X509Certificate(pem);
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
  const names = (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .map((entry) => /^(?:DNS|IP Address):(.+)$/.exec(entry.trim())?.[1]?.toLowerCase())
    .filter((n): n is string => Boolean(n));
  return {
    fingerprint: cert.fingerprint256,
    spkiPin: `sha256//${createHash('sha256').update(spki).digest('base64')}`,
    names: [...new Set(names)].sort(),
    notAfter: Date.parse(cert.validTo),
  };
}

/** Why a stored self-signed certificate must be made again, or undefined when it still serves. */
export function renewalReason(facts: CertificateFacts, needed: readonly string[], now: number): string | undefined {
  if (facts.notAfter - now < RENEW_BEFORE_DAYS * DAY_MS) return 'it expires within 30 days';
  const missing = needed.filter((n) => !facts.names.includes(n));
  if (missing.length) return `it does not cover ${missing.join(', ')}`;
  return undefined;
}
