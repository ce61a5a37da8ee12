import type { Db } from '../db/database.js';
import type { Role } from './capabilities.js';

export interface AccountRow {
  id: number;
  username: string;
  display_name: string;
  role: Role;
  enabled: number;
  must_change_password: number;
  password_hash: string;
  created_at: string;
  last_login_at: string | null;
}

export interface SessionRow {
  id: number;
  account_id: number;
  created_at: number;
  last_seen: number;
}

export type SessionWithAccount = SessionRow & { account: AccountRow };

/** The SQL of accounts and sessions, prepared once per database. */
export function createAccountRepo(db: Db) {
  const s = {
    count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM accounts'),
    list: db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY id'),
    byId: db.prepare<[number], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
    byUsername: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE username = ?'),
    insert: db.prepare<[string, string, Role, number, string, string], { id: number }>(
      `INSERT INTO accounts (username, display_name, role, must_change_password, password_hash, created_at)
       VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
    ),
    update: db.prepare<[string, Role, number, number], void>(
      'UPDATE accounts SET display_name = ?, role = ?, enabled = ? WHERE id = ?',
    ),
    setPassword: db.prepare<[string, number, number], void>(
      'UPDATE accounts SET password_hash = ?, must_change_password = ? WHERE id = ?',
    ),
    setLastLogin: db.prepare<[string, number], void>('UPDATE accounts SET last_login_at = ? WHERE id = ?'),
    enabledAdmins: db.prepare<[], { n: number }>(
      "SELECT count(*) AS n FROM accounts WHERE role = 'administrator' AND enabled = 1",
    ),
    insertSession: db.prepare<[number, string, number, number], void>(
      'INSERT INTO sessions (account_id, token_hash, created_at, last_seen) VALUES (?, ?, ?, ?)',
    ),
    sessionByHash: db.prepare<[string], SessionRow & { [K in keyof AccountRow as `a_${K}`]: AccountRow[K] }>(
      `SELECT s.id, s.account_id, s.created_at, s.last_seen,
              a.id AS a_id, a.username AS a_username, a.display_name AS a_display_name, a.role AS a_role,
              a.enabled AS a_enabled, a.must_change_password AS a_must_change_password,
              a.password_hash AS a_password_hash, a.created_at AS a_created_at, a.last_login_at AS a_last_login_at
       FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?`,
    ),
    sessionById: db.prepare<[number], SessionRow>('SELECT id, account_id, created_at, last_seen FROM sessions WHERE id = ?'),
    touchSession: db.prepare<[number, number], void>('UPDATE sessions SET last_seen = ? WHERE id = ?'),
    deleteSession: db.prepare<[number], void>('DELETE FROM sessions WHERE id = ?'),
    deleteSessionsOf: db.prepare<[number], void>('DELETE FROM sessions WHERE account_id = ?'),
  };

  return {
    count: () => s.count.get()!.n,
    list: () => s.list.all(),
    byId: (id: number) => s.byId.get(id),
    byUsername: (username: string) => s.byUsername.get(username),
    insert: (a: { username: string; display_name: string; role: Role; must_change_password: boolean; password_hash: string; created_at: string }) =>
      s.insert.get(a.username, a.display_name, a.role, a.must_change_password ? 1 : 0, a.password_hash, a.created_at)!.id,
    update: (id: number, a: { display_name: string; role: Role; enabled: boolean }) =>
      s.update.run(a.display_name, a.role, a.enabled ? 1 : 0, id),
    setPassword: (id: number, hash: string, mustChange: boolean) => s.setPassword.run(hash, mustChange ? 1 : 0, id),
    setLastLogin: (id: number, at: string) => s.setLastLogin.run(at, id),
    enabledAdmins: () => s.enabledAdmins.get()!.n,
    insertSession: (accountId: number, tokenHash: string, now: number) => s.insertSession.run(accountId, tokenHash, now, now),
    sessionByHash(tokenHash: string): SessionWithAccount | undefined {
      const row = s.sessionByHash.get(tokenHash);
      if (!row) return undefined;
      return {
        id: row.id,
        account_id: row.account_id,
        created_at: row.created_at,
        last_seen: row.last_seen,
        account: {
          id: row.a_id,
          username: row.a_username,
          display_name: row.a_display_name,
          role: row.a_role,
          enabled: row.a_enabled,
          must_change_password: row.a_must_change_password,
          password_hash: row.a_password_hash,
          created_at: row.a_created_at,
          last_login_at: row.a_last_login_at,
        },
      };
    },
    /** The session row only, without refreshing anything (the event stream's re-check). */
    sessionById: (id: number) => s.sessionById.get(id),
    touchSession: (id: number, now: number) => s.touchSession.run(now, id),
    deleteSession: (id: number) => s.deleteSession.run(id),
    deleteSessionsOf: (accountId: number) => s.deleteSessionsOf.run(accountId),
  };
}

export type AccountRepo = ReturnType<typeof createAccountRepo>;
