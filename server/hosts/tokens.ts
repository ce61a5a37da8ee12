import { bearerCredential, newToken, secretsEqual, sha256 } from '../http/secrets.js';

/** The kinds of agent credential (PRODUCT.md): each is accepted only where its kind belongs. */
export const TOKEN_PREFIX = { enrollment: 'hfe_', host: 'hfh_', receipt: 'hfr_' } as const;
export type AgentTokenKind = keyof typeof TOKEN_PREFIX;

const SHAPE = /^hf[ehr]_[A-Za-z0-9_-]{43}$/;

/** A new token of a kind (shown once) and the hash that is all the database keeps. */
export function issueToken(kind: AgentTokenKind): { token: string; hash: string } {
  const token = TOKEN_PREFIX[kind] + newToken();
  return { token, hash: sha256(token) };
}

/** The bearer token of a request when it has the shape of the given kind, else undefined. */
export function bearerOfKind(authorization: string | undefined, kind: AgentTokenKind): string | undefined {
  const token = bearerCredential(authorization);
  if (!token || !SHAPE.test(token) || !token.startsWith(TOKEN_PREFIX[kind])) return undefined;
  return token;
}

/** True when the Authorization header carries any agent token (hfe_, hfh_, hfr_). */
export function carriesAgentToken(authorization: string | undefined): boolean {
  return /^hf[ehr]_/.test(bearerCredential(authorization) ?? '');
}

export { sha256 };

/** Stored hashes are looked up by value, then compared again in constant time. */
export function hashMatches(token: string, storedHash: string): boolean {
  return secretsEqual(sha256(token), storedHash);
}
