import type { Role } from '../contract/access.js';
import type { Db } from '../db/database.js';

export interface ApiTokenRow {
  id: number;
  account_id: number;
  name: string;
  role: Role;
  token_hash: string;
  created_at: string;
  expires_at: number | null;
  last_used_at: number | null;
  last_used_ip: string | null;
}

/** A token with its owner's username, which the account list and the audit entries show. */
export type ApiTokenWithOwner = ApiTokenRow & { username: string };

export function createTokenRepo(db: Db) {
  const s = {
    insert: db.prepare<[number, string, Role, string, string, number | null], { id: number }>(
      `INSERT INTO api_tokens (account_id, name, role, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
    ),
    byId: db.prepare<[number], ApiTokenRow>('SELECT * FROM api_tokens WHERE id = ?'),
    ofAccount: db.prepare<[number], ApiTokenRow>('SELECT * FROM api_tokens WHERE account_id = ? ORDER BY id'),
    countOfAccount: db.prepare<[number], number>('SELECT count(*) FROM api_tokens WHERE account_id = ?').pluck(),
    all: db.prepare<[], ApiTokenRow>('SELECT * FROM api_tokens ORDER BY id'),
    byHash: db.prepare<[string], ApiTokenRow>('SELECT * FROM api_tokens WHERE token_hash = ?'),
    // The WHERE clause keeps two requests in the same minute from both writing.
    touch: db.prepare<[number, string | null, number, number], void>(
      'UPDATE api_tokens SET last_used_at = ?, last_used_ip = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)',
    ),
    remove: db.prepare<[number], void>('DELETE FROM api_tokens WHERE id = ?'),
  };
  return {
    insert: (t: { account_id: number; name: string; role: Role; token_hash: string; created_at: string; expires_at: number | null }) =>
      s.insert.get(t.account_id, t.name, t.role, t.token_hash, t.created_at, t.expires_at)!.id,
    byId: (id: number) => s.byId.get(id),
    ofAccount: (accountId: number) => s.ofAccount.all(accountId),
    countOfAccount: (accountId: number) => s.countOfAccount.get(accountId)!,
    all: () => s.all.all(),
    byHash: (tokenHash: string) => s.byHash.get(tokenHash),
    /** Records a use unless one was recorded after `notAfter`. */
    touch: (id: number, now: number, ip: string | null, notAfter: number) => s.touch.run(now, ip, id, notAfter),
    remove: (id: number) => s.remove.run(id),
  };
}

export type TokenRepo = ReturnType<typeof createTokenRepo>;
