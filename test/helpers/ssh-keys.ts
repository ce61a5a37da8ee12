import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** RFC 4251 `string`s, concatenated: the SSH wire form. */
export function wire(...parts: (string | Buffer)[]): Buffer {
  return Buffer.concat(
    parts.flatMap((p) => {
      const bytes = typeof p === 'string' ? Buffer.from(p, 'latin1') : p;
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      return [length, bytes];
    }),
  );
}

const line = (type: string, blob: Buffer, comment?: string) => `${type} ${blob.toString('base64')}${comment ? ` ${comment}` : ''}`;

/** A fresh ssh-ed25519 public key line, made with node's crypto (fast, for tests that need many). */
export function ed25519Line(comment = 'test@homefleet'): string {
  const x = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return line('ssh-ed25519', wire('ssh-ed25519', x), comment);
}

/** FIDO security-key lines as OpenSSH writes them (PROTOCOL.u2f); ssh-keygen makes them only with a token at hand. */
export function skEd25519Line(comment = 'yubi@homefleet'): string {
  const x = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return line('sk-ssh-ed25519@openssh.com', wire('sk-ssh-ed25519@openssh.com', x, 'ssh:'), comment);
}

export function skEcdsaLine(comment = 'yubi@homefleet'): string {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  const q = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  return line('sk-ecdsa-sha2-nistp256@openssh.com', wire('sk-ecdsa-sha2-nistp256@openssh.com', 'nistp256', q, 'ssh:'), comment);
}

export interface GeneratedKey {
  /** The .pub line, without its newline. */
  pub: string;
  /** The private key file's text. */
  private: string;
  /** `ssh-keygen -l -f` of the .pub: `<bits> SHA256:… comment (TYPE)`. */
  listed: { bits: number; fingerprint: string };
}

/** A key pair made by the real ssh-keygen (`args` e.g. ['-t', 'rsa', '-b', '2048', '-m', 'PEM']). */
export function sshKeygen(args: string[], comment = 'test@homefleet'): GeneratedKey {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-keys-'));
  try {
    const file = path.join(dir, 'key');
    execFileSync('ssh-keygen', ['-q', ...args, '-C', comment, '-f', file, ...(args.includes('-N') ? [] : ['-N', ''])]);
    return { pub: fs.readFileSync(`${file}.pub`, 'utf8').trim(), private: fs.readFileSync(file, 'utf8'), listed: keygenList(`${file}.pub`) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What `ssh-keygen -l` says of a public key line. */
export function listLine(pub: string): { bits: number; fingerprint: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-keys-'));
  try {
    fs.writeFileSync(path.join(dir, 'key.pub'), pub + '\n');
    return keygenList(path.join(dir, 'key.pub'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function keygenList(file: string) {
  const [bits, fingerprint] = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', file], { encoding: 'utf8' }).trim().split(' ');
  return { bits: Number(bits), fingerprint: fingerprint! };
}

/** A PuTTY .ppk as puttygen writes it (v3, unencrypted); its bytes are random, its shape is PuTTY's. */
export function puttyPrivateKey(): string {
  const b64 = (n: number) => randomBytes(n).toString('base64');
  return [
    'PuTTY-User-Key-File-3: ssh-ed25519',
    'Encryption: none',
    'Comment: eddsa-key-20250101',
    'Public-Lines: 2',
    b64(36),
    b64(15),
    'Private-Lines: 1',
    b64(36),
    `Private-MAC: ${randomBytes(32).toString('hex')}`,
    '',
  ].join('\n');
}
