import { createHash, createPublicKey } from 'node:crypto';
import type sshpk from 'sshpk';

/** PRODUCT.md's words for a private key pasted by mistake. */
export const PRIVATE_KEY_ERROR = 'this is a private key: paste the public key (.pub)';

export const KEY_TYPES = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
] as const;
export type KeyType = (typeof KEY_TYPES)[number];

export const MIN_RSA_BITS = 2048;
export const MAX_COMMENT = 200;

const KINDS = 'an ssh-ed25519, ecdsa-sha2-nistp256/384/521, ssh-rsa (2048 bits or more), sk-ssh-ed25519@openssh.com or sk-ecdsa-sha2-nistp256@openssh.com public key line';

export interface PublicKey {
  type: KeyType;
  bits: number;
  /** `SHA256:<base64, no padding>` of the key's wire form, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  comment: string;
  /** type, base64 and comment: what is stored. */
  line: string;
}

export type KeyParse = { key: PublicKey } | { private: true } | { invalid: string };

/**
 * Private keys in every armour a person may paste: PEM (`BEGIN RSA/EC/DSA/ENCRYPTED PRIVATE KEY`),
 * OpenSSH's own (`BEGIN OPENSSH PRIVATE KEY`, or its base64 alone: "openssh-key-v1"), ssh.com's
 * (`BEGIN SSH2 ENCRYPTED PRIVATE KEY`) and PuTTY's .ppk.
 */
const PRIVATE = [/BEGIN [A-Z0-9 ]*PRIVATE KEY/, /PuTTY-User-Key-File-\d+\s*:/i, /b3BlbnNzaC1rZXktdjE/];

export const looksPrivate = (text: string): boolean => PRIVATE.some((re) => re.test(text));

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * One OpenSSH public key line (`type base64 [comment]`) checked and made canonical. Nothing of the
 * text is put into a message: a paste may hold something secret. sshpk (and the crypto libraries it
 * brings) is loaded on the first key, not at start, as the server's other rarely used parsers are.
 */
export async function parsePublicKey(text: string): Promise<KeyParse> {
  if (looksPrivate(text)) return { private: true };
  const trimmed = text.trim();
  if (/[\r\n]/.test(trimmed)) return { invalid: `must be one line: ${KINDS}` };
  const [type, data, ...rest] = trimmed.split(/[ \t]+/);
  if (!type || !data) return { invalid: `must be ${KINDS}` };
  if (!(KEY_TYPES as readonly string[]).includes(type)) return { invalid: `must be ${KINDS}` };
  if (!BASE64.test(data) || data.length % 4 !== 0) return { invalid: 'has a key part that is not base64' };
  const comment = rest.join(' ');
  if (comment.length > MAX_COMMENT) return { invalid: `has a comment longer than ${MAX_COMMENT} characters` };
  if (CONTROL.test(comment)) return { invalid: 'has control characters in its comment' };
  const blob = Buffer.from(data, 'base64');
  const checked = type.startsWith('sk-') ? checkSecurityKey(type as KeyType, blob) : checkWithSshpk((await import('sshpk')).default, type as KeyType, blob);
  if ('invalid' in checked) return checked;
  const fingerprint = 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
  return {
    key: { type: type as KeyType, bits: checked.bits, fingerprint, comment, line: `${type} ${blob.toString('base64')}${comment ? ` ${comment}` : ''}` },
  };
}

const SSHPK_TYPES: Record<string, { type: string; curve?: string }> = {
  'ssh-ed25519': { type: 'ed25519' },
  'ecdsa-sha2-nistp256': { type: 'ecdsa', curve: 'nistp256' },
  'ecdsa-sha2-nistp384': { type: 'ecdsa', curve: 'nistp384' },
  'ecdsa-sha2-nistp521': { type: 'ecdsa', curve: 'nistp521' },
  'ssh-rsa': { type: 'rsa' },
};

function checkWithSshpk(sshpk: typeof import('sshpk'), type: KeyType, blob: Buffer): { bits: number } | { invalid: string } {
  let key: sshpk.Key;
  try {
    key = sshpk.parseKey(blob, 'rfc4253');
  } catch {
    return { invalid: `is not a valid ${type} key` };
  }
  const want = SSHPK_TYPES[type]!;
  // The wire form must be exactly what sshpk writes back: no trailing bytes, no other type inside.
  if (key.type !== want.type || (want.curve && key.curve !== want.curve) || !key.toBuffer('rfc4253').equals(blob)) {
    return { invalid: `is not a valid ${type} key` };
  }
  if (type === 'ssh-rsa' && key.size < MIN_RSA_BITS) return { invalid: `is an RSA key of ${key.size} bits: at least ${MIN_RSA_BITS} are needed` };
  return { bits: key.size };
}

/** Reads the SSH wire form's length-prefixed strings (RFC 4251 `string`), or undefined when they do not fill it exactly. */
function wireStrings(blob: Buffer): Buffer[] | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) return undefined;
    const length = blob.readUInt32BE(at);
    at += 4;
    if (at + length > blob.length) return undefined;
    parts.push(blob.subarray(at, at + length));
    at += length;
  }
  return parts;
}

/**
 * sshpk (1.18) knows neither FIDO security-key type, so these two are read by their wire form
 * (OpenSSH PROTOCOL.u2f): `string type, string pk(32), string application` for ed25519, and
 * `string type, string "nistp256", string Q, string application` for ECDSA, whose point must be on
 * the curve (node's crypto checks it).
 */
function checkSecurityKey(type: KeyType, blob: Buffer): { bits: number } | { invalid: string } {
  const invalid = { invalid: `is not a valid ${type} key` };
  const parts = wireStrings(blob);
  if (!parts || parts[0]?.toString('latin1') !== type) return invalid;
  const application = parts.at(-1)!;
  if (application.length === 0 || application.length > 255 || /[^\x21-\x7e]/.test(application.toString('latin1'))) return invalid;
  if (type === 'sk-ssh-ed25519@openssh.com') {
    return parts.length === 3 && parts[1]!.length === 32 ? { bits: 256 } : invalid;
  }
  if (parts.length !== 4 || parts[1]!.toString('latin1') !== 'nistp256') return invalid;
  const q = parts[2]!;
  if (q.length !== 65 || q[0] !== 4) return invalid;
  try {
    const jwk = { kty: 'EC', crv: 'P-256', x: q.subarray(1, 33).toString('base64url'), y: q.subarray(33).toString('base64url') };
    createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    return invalid;
  }
  return { bits: 256 };
}
