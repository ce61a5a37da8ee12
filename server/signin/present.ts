import type { Passkey } from '../contract/signin.js';

/**
 * A registered passkey as the API shows it, never its key. `passwordSetAt` is when the account's
 * password was last set (ISO seconds, as created_at): a passkey added since is marked.
 */
export function presentPasskey(row: { id: number; name: string; created_at: string; last_used_at: string | null }, passwordSetAt: string): Passkey {
  return { id: row.id, name: row.name, created_at: row.created_at, last_used_at: row.last_used_at, added_since_password_change: row.created_at >= passwordSetAt };
}
