import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

// Secrets as every kind of credential handles them (sessions, personal and agent tokens, the
// telemetry token): random, kept only as a SHA-256, compared in constant time, read from one header.

/** 32 random bytes, base64url: what the session cookie carries, and every token after its prefix. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The credential of an `Authorization: Bearer …` header: '' for a bare `Bearer`, undefined when the
 * header is missing or names another scheme. The one parser for every kind of token (API tokens,
 * agents' hfe_/hfh_/hfr_, telemetry), so a header means the same wherever it is read; what follows
 * `Bearer` is taken whole, and a value with spaces is simply no valid token.
 */
export function bearerCredential(authorization: string | undefined): string | undefined {
  const match = authorization === undefined ? null : /^Bearer(?:[ \t]+(.*))?$/is.exec(authorization);
  return match ? (match[1] ?? '').trim() : undefined;
}

/** One-shot `crypto.hash` (Node ≥ 20.12): a token is hashed on every request, at half the cost of a Hash object. */
export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Compares two secrets in constant time, whatever their lengths (both are hashed to 32 bytes first). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}
