import type { AccountRepo } from '../access/repo.js';
import type { Role } from '../access/capabilities.js';
import { ABSOLUTE_MS, IDLE_MS } from '../access/sessions.js';
import type { Clock } from '../time.js';

/** What an open stream was opened with. A personal API token would be another kind here. */
export interface StreamCredential {
  kind: 'session';
  sessionId: number;
  accountId: number;
  role: Role;
}

export type CredentialCheck = { ok: true } | { ok: false; reason: string };

/**
 * PRODUCT.md: "Every 15 s the stream re-checks its session (revoked, expired, account disabled,
 * role changed)". Reads only; never refreshes idle time, since a stream is not activity.
 * `hint` is the reason a revocation announced itself with, used when the session is simply gone.
 */
export function recheckCredential(repo: AccountRepo, clock: Clock, credential: StreamCredential, hint?: string): CredentialCheck {
  const account = repo.byId(credential.accountId);
  if (!account) return { ok: false, reason: 'account deleted' };
  if (!account.enabled) return { ok: false, reason: 'account disabled' };
  if (account.role !== credential.role) return { ok: false, reason: 'role changed' };
  if (account.must_change_password) return { ok: false, reason: 'password reset by an administrator' };
  const session = repo.sessionById(credential.sessionId);
  if (!session) return { ok: false, reason: hint ?? 'session revoked' };
  const now = clock.now();
  if (now >= session.created_at + ABSOLUTE_MS || now >= session.last_seen + IDLE_MS) return { ok: false, reason: 'session expired' };
  return { ok: true };
}
