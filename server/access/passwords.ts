import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { availableParallelism } from 'node:os';

/** scrypt's cost parameters; stored with each hash, and a hash is verified at the cost it was made with. */
export interface PasswordCost {
  N: number;
  r: number;
  p: number;
}

/** Node's default scrypt cost (16 MiB); stored with each hash so it can be raised without a migration. */
export const DEFAULT_PASSWORD_COST: PasswordCost = { N: 16384, r: 8, p: 1 };
const DEFAULT = DEFAULT_PASSWORD_COST;
const KEY_LENGTH = 32;

/**
 * Async scrypt runs on the libuv pool, off the event loop, but ten at once still take every core and
 * starve the requests the event loop serves. So at most all cores but one hash at a time; the rest wait.
 */
const MAX_CONCURRENT = Math.max(1, availableParallelism() - 1);
let running = 0;
const waiting: Array<() => void> = [];
let runs = 0;

/** How many scrypt derivations this process has started: the throttle tests count real hash runs with it. */
export const scryptRuns = (): number => runs;

async function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 };
    runs++;
    return await new Promise((resolve, reject) => {
      scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
    });
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/**
 * `scrypt$N$r$p$salt$hash` with a fresh 16-byte salt, at the default cost. Only tests that do not
 * test hashing pass a lower `cost` (through createApp's `passwordCost`); nothing the product reads sets it.
 */
export async function hashPassword(password: string, cost: PasswordCost = DEFAULT): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Constant-time check of a password against a stored hash; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0)) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  const actual = await derive(password, salt, { N, r, p });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Verified against when the username is unknown, so that answer costs the same scrypt run as a wrong password. */
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hashPassword(randomBytes(16).toString('base64url'));
  await verifyPassword(password, await dummyHash);
}

/** An administrator-issued password the account must change at first use: 96 random bits. */
export function temporaryPassword(): string {
  return randomBytes(12).toString('base64url');
}
