import type { AccountRepo } from '../access/repo.js';
import { sessionExpired } from '../access/sessions.js';
import { lowerRole, type Role } from '../contract/access.js';
import type { Clock } from '../time.js';

/**
 * What an open stream was opened with: a browser session, or a personal API token (`hfp_`).
 * `role` is the role the stream's events are capped at: the account's for a session, the lower of
 * the token's and its owner's for a token.
 */
export type StreamCredential =
  | { kind: 'session'; sessionId: number; accountId: number; role: Role }
  | { kind: 'token'; tokenId: number; accountId: number; role: Role };

/** The key the per-credential stream cap counts under: one session, or one token. */
export const credentialKey = (credential: StreamCredential): string =>
  credential.kind === 'session' ? `session:${credential.sessionId}` : `token:${credential.tokenId}`;

export type CredentialCheck = { ok: true } | { ok: false; reason: string };

/** Where a re-check reads from; the token store is handed in (server/services.ts), so events import no tokens module. */
export interface CredentialSources {
  accounts: AccountRepo;
  tokens: { byId(id: number): { account_id: number; role: Role; expires_at: number | null } | undefined };
}

/**
 * PRODUCT.md: "Every 15 s the stream re-checks its session (revoked, expired, account disabled,
 * role changed)". Reads only; never refreshes idle time, since a stream is not activity.
 * A token stream is held to what the bearer guard would decide now: the token still exists and has
 * not expired, its owner is enabled without a pending password reset, and min(token role, owner's
 * role) is still the role the stream was opened with.
 * `hint` is the reason a revocation announced itself with, used when the session or token is simply gone.
 */
export function recheckCredential(sources: CredentialSources, clock: Clock, credential: StreamCredential, hint?: string): CredentialCheck {
  const account = sources.accounts.byId(credential.accountId);
  if (!account) return { ok: false, reason: 'account deleted' };
  if (!account.enabled) return { ok: false, reason: 'account disabled' };
  const now = clock.now();
  if (credential.kind === 'token') {
    const token = sources.tokens.byId(credential.tokenId);
    if (!token || token.account_id !== credential.accountId) return { ok: false, reason: hint ?? 'token revoked' };
    if (lowerRole(token.role, account.role) !== credential.role) return { ok: false, reason: 'role changed' };
    if (account.must_change_password) return { ok: false, reason: 'password reset by an administrator' };
    if (token.expires_at !== null && now >= token.expires_at) return { ok: false, reason: 'token expired' };
    return { ok: true };
  }
  if (account.role !== credential.role) return { ok: false, reason: 'role changed' };
  if (account.must_change_password) return { ok: false, reason: 'password reset by an administrator' };
  const session = sources.accounts.sessionById(credential.sessionId);
  if (!session) return { ok: false, reason: hint ?? 'session revoked' };
  if (sessionExpired(session, now)) return { ok: false, reason: 'session expired' };
  return { ok: true };
}
