import { describe, expect, it } from 'vitest';
import { hashPassword, temporaryPassword, verifyPassword } from './passwords.js';

describe('password hashing', () => {
  it('stores scrypt with its parameters and a 16-byte salt, never the password', async () => {
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain('correct');
  });

  it('salts every hash: the same password hashes differently', async () => {
    expect(await hashPassword('same-password')).not.toBe(await hashPassword('same-password'));
  });

  it('verifies the right password only', async () => {
    const hash = await hashPassword('right-password');
    expect(await verifyPassword('right-password', hash)).toBe(true);
    expect(await verifyPassword('right-passwore', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
  });

  it('honours the parameters stored with an older hash', async () => {
    const hash = await hashPassword('param-password');
    const [, , , , salt] = hash.split('$');
    const { scryptSync } = await import('node:crypto');
    const cheap = ['scrypt', 1024, 8, 1, salt, scryptSync('param-password', Buffer.from(salt!, 'base64url'), 32, { N: 1024, r: 8, p: 1 }).toString('base64url')].join('$');
    expect(await verifyPassword('param-password', cheap)).toBe(true);
  });

  it.each(['', 'plain', 'scrypt$x$8$1$abc$def', 'bcrypt$16384$8$1$abc$def'])('never matches a malformed hash %j', async (stored) => {
    expect(await verifyPassword('anything', stored)).toBe(false);
  });

  it('issues 16-character random temporary passwords', () => {
    const a = temporaryPassword();
    expect(a).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(temporaryPassword()).not.toBe(a);
  });
});
