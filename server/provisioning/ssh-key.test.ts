import { describe, expect, it } from 'vitest';
import { ed25519Line, listLine, puttyPrivateKey, skEcdsaLine, skEd25519Line, sshKeygen, wire } from '../../test/helpers/ssh-keys.js';
import { parsePublicKey, type KeyParse } from './ssh-key.js';

const key = (result: KeyParse) => {
  if (!('key' in result)) throw new Error(`not a key: ${JSON.stringify(result)}`);
  return result.key;
};

describe('parsePublicKey', () => {
  it.each([
    ['ssh-ed25519', ['-t', 'ed25519'], 256],
    ['ecdsa-sha2-nistp256', ['-t', 'ecdsa', '-b', '256'], 256],
    ['ecdsa-sha2-nistp384', ['-t', 'ecdsa', '-b', '384'], 384],
    ['ecdsa-sha2-nistp521', ['-t', 'ecdsa', '-b', '521'], 521],
    ['ssh-rsa', ['-t', 'rsa', '-b', '2048'], 2048],
    ['ssh-rsa', ['-t', 'rsa', '-b', '3072'], 3072],
  ])('reads a %s key from ssh-keygen with the fingerprint ssh-keygen -l prints', async (type, args, bits) => {
    const made = sshKeygen(args, 'alice@laptop');
    expect(key(await parsePublicKey(made.pub))).toEqual({ type, bits, fingerprint: made.listed.fingerprint, comment: 'alice@laptop', line: made.pub });
    expect(made.listed.bits).toBe(bits);
  });

  it.each([
    ['sk-ssh-ed25519@openssh.com', skEd25519Line],
    ['sk-ecdsa-sha2-nistp256@openssh.com', skEcdsaLine],
  ])('reads a %s security key by its wire form, fingerprinted as ssh-keygen -l does', async (type, make) => {
    const pub = make();
    const listed = listLine(pub);
    expect(key(await parsePublicKey(pub))).toEqual({ type, bits: 256, fingerprint: listed.fingerprint, comment: 'yubi@homefleet', line: pub });
  });

  it('keeps the comment with its spaces, trims the line, and takes a line without a comment', async () => {
    const pub = ed25519Line('');
    expect(key(await parsePublicKey(`  ${pub} my laptop key \n`))).toMatchObject({ comment: 'my laptop key', line: `${pub} my laptop key` });
    expect(key(await parsePublicKey(pub))).toMatchObject({ comment: '', line: pub });
  });

  it('refuses RSA below 2048 bits and DSA with a message for the field', async () => {
    expect(await parsePublicKey(sshKeygen(['-t', 'rsa', '-b', '1024']).pub)).toEqual({ invalid: 'is an RSA key of 1024 bits: at least 2048 are needed' });
    expect(await parsePublicKey(sshKeygen(['-t', 'dsa']).pub)).toEqual({ invalid: expect.stringMatching(/^must be an ssh-ed25519, /) });
  });

  it.each([
    ['empty', ''],
    ['garbage', 'hello world'],
    ['a type alone', 'ssh-ed25519'],
    ['not base64', 'ssh-ed25519 AAAA$$$$ x'],
    ['truncated', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI x'],
    ['two lines', `${ed25519Line()}\n${ed25519Line()}`],
    ['an options prefix', `from="10.0.0.1" ${ed25519Line()}`],
    ['a type that does not match the key', ed25519Line().replace('ssh-ed25519', 'ssh-rsa')],
    ['trailing bytes', `ssh-ed25519 ${Buffer.concat([Buffer.from(ed25519Line().split(' ')[1]!, 'base64'), Buffer.from([0, 0, 0, 0])]).toString('base64')}`],
    ['an sk key of 31 bytes', `sk-ssh-ed25519@openssh.com ${wire('sk-ssh-ed25519@openssh.com', Buffer.alloc(31), 'ssh:').toString('base64')}`],
    ['an sk key without application', `sk-ssh-ed25519@openssh.com ${wire('sk-ssh-ed25519@openssh.com', Buffer.alloc(32)).toString('base64')}`],
    ['an sk-ecdsa point off the curve', `sk-ecdsa-sha2-nistp256@openssh.com ${wire('sk-ecdsa-sha2-nistp256@openssh.com', 'nistp256', Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]), 'ssh:').toString('base64')}`],
    ['a comment with a control character', `${ed25519Line('')} a\u0007b`],
    ['a certificate', `ssh-ed25519-cert-v01@openssh.com ${wire('ssh-ed25519-cert-v01@openssh.com').toString('base64')}`],
  ])('refuses %s', async (_what, text) => {
    expect(await parsePublicKey(text)).toEqual({ invalid: expect.any(String) });
  });

  it.each([
    ['OpenSSH', ['-t', 'ed25519']],
    ['PEM RSA', ['-t', 'rsa', '-b', '2048', '-m', 'PEM']],
    ['PEM EC', ['-t', 'ecdsa', '-m', 'PEM']],
    ['PKCS#8', ['-t', 'rsa', '-b', '2048', '-m', 'PKCS8']],
    ['encrypted PKCS#8', ['-t', 'ecdsa', '-m', 'PKCS8', '-N', 'a passphrase']],
    ['DSA PEM', ['-t', 'dsa', '-m', 'PEM']],
  ])('knows a private key in %s form', async (_what, args) => {
    const made = sshKeygen(args);
    expect(await parsePublicKey(made.private)).toEqual({ private: true });
    // Its base64 alone, without the armour lines, as a hurried paste may be.
    expect(await parsePublicKey(made.private.split('\n').filter((l) => !l.startsWith('-----')).join('\n'))).not.toHaveProperty('key');
  });

  it('knows a PuTTY private key', async () => {
    expect(await parsePublicKey(puttyPrivateKey())).toEqual({ private: true });
  });

  it('never puts the text into a message', async () => {
    const text = 'ssh-ed25519 c2VjcmV0LXNlY3JldA== x';
    expect(JSON.stringify(await parsePublicKey(text))).not.toContain('c2VjcmV0');
  });
});
