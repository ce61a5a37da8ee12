import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

// A software passkey for HTTP-level tests (Chromium's virtual authenticator covers the browser):
// 'none' attestation, an ES256 key, user presence and verification always asserted. Just enough
// CBOR to write the attestation object and the COSE key.

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Buffer) => data.toString('base64url');

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 256) return Buffer.from([(major << 5) | 24, length]);
  return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
}
const cborInt = (n: number) => (n >= 0 ? cborHead(0, n) : cborHead(1, -1 - n));
const cborBytes = (b: Buffer) => Buffer.concat([cborHead(2, b.length), b]);
const cborText = (s: string) => Buffer.concat([cborHead(3, Buffer.byteLength(s)), Buffer.from(s)]);
const cborMap = (entries: Array<[Buffer, Buffer]>) => Buffer.concat([cborHead(5, entries.length), ...entries.flat()]);

export interface SoftPasskey {
  id: string;
  /** navigator.credentials.create()'s answer, as @simplewebauthn/browser sends it. */
  register(options: { challenge: string; rp: { id: string } }, origin: string): Record<string, unknown>;
  /** navigator.credentials.get()'s answer. */
  assert(options: { challenge: string; rpId: string }, origin: string): Record<string, unknown>;
}

export function softPasskey(): SoftPasskey {
  const { privateKey, publicKey }: { privateKey: KeyObject; publicKey: KeyObject } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const credentialId = randomBytes(16);
  const id = b64url(credentialId);
  let counter = 0;
  const coseKey = cborMap([
    [cborInt(1), cborInt(2)],
    [cborInt(3), cborInt(-7)],
    [cborInt(-1), cborInt(1)],
    [cborInt(-2), cborBytes(Buffer.from(jwk.x!, 'base64url'))],
    [cborInt(-3), cborBytes(Buffer.from(jwk.y!, 'base64url'))],
  ]);
  const authData = (rpId: string, attested: boolean) => {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(++counter);
    // Flags: user present (0x01), user verified (0x04), attested credential data (0x40).
    const flags = Buffer.from([0x05 | (attested ? 0x40 : 0)]);
    const parts = [sha256(rpId), flags, count];
    if (attested) parts.push(Buffer.alloc(16), Buffer.from([0, credentialId.length]), credentialId, coseKey);
    return Buffer.concat(parts);
  };
  const clientData = (type: string, challenge: string, origin: string) => Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));

  return {
    id,
    register(options, origin) {
      const clientDataJSON = clientData('webauthn.create', options.challenge, origin);
      const attestationObject = cborMap([
        [cborText('fmt'), cborText('none')],
        [cborText('attStmt'), cborMap([])],
        [cborText('authData'), cborBytes(authData(options.rp.id, true))],
      ]);
      return {
        id, rawId: id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
        response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal'] },
      };
    },
    assert(options, origin) {
      const clientDataJSON = clientData('webauthn.get', options.challenge, origin);
      const data = authData(options.rpId, false);
      const signature = createSign('SHA256').update(Buffer.concat([data, sha256(clientDataJSON)])).sign(privateKey);
      return {
        id, rawId: id, type: 'public-key', clientExtensionResults: {}, authenticatorAttachment: 'platform',
        response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(data), signature: b64url(signature), userHandle: null },
      };
    },
  };
}
