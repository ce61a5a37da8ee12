import type { Db } from '../db/database.js';
import type { Role } from '../contract/access.js';

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
  /** When the password was last set; null: not since the account was made (before migration 13). */
  password_changed_at: string | null;
  /** When the password before this one was set: passkeys added since are marked for review. */
  previous_password_changed_at?: string | null;
}

export interface SessionRow {
  id: number;
  account_id: number;
  created_at: number;
  last_seen: number;
}

export type SessionWithAccount = SessionRow & { account: AccountRow };

/** The most sessions remembered (one per account); past it the memory starts again. */
const REMEMBERED_SESSIONS = 1_000;

/**
 * Each request's session as last read, by token hash, kept while nothing can have changed it: this
 * connection writes accounts and sessions only through a repo here, which forgets them all, and a
 * commit by any other connection (the recovery command's) moves `PRAGMA data_version`. A request
 * then reads one pragma instead of the session and account join, and a revocation still counts
 * from the next request on. One per database, however many repos use it.
 */
const remembered = new WeakMap<Db, { version: number; sessions: Map<string, SessionWithAccount> }>();

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
    setPassword: db.prepare<[string, number, string, number], void>(
      'UPDATE accounts SET password_hash = ?, must_change_password = ?, previous_password_changed_at = coalesce(password_changed_at, created_at), password_changed_at = ? WHERE id = ?',
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
              a.password_hash AS a_password_hash, a.created_at AS a_created_at, a.last_login_at AS a_last_login_at,
              a.password_changed_at AS a_password_changed_at
       FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = ?`,
    ),
    sessionById: db.prepare<[number], SessionRow>('SELECT id, account_id, created_at, last_seen FROM sessions WHERE id = ?'),
    touchSession: db.prepare<[number, number], void>('UPDATE sessions SET last_seen = ? WHERE id = ?'),
    deleteSession: db.prepare<[number], void>('DELETE FROM sessions WHERE id = ?'),
    deleteSessionsOf: db.prepare<[number], void>('DELETE FROM sessions WHERE account_id = ?'),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
  };
  if (!remembered.has(db)) remembered.set(db, { version: -1, sessions: new Map() });
  const memory = remembered.get(db)!;
  /** After a write: every remembered session is forgotten, as any of them may be what it changed. */
  const write = <T>(result: T): T => {
    memory.sessions.clear();
    return result;
  };
  const copy = (found: SessionWithAccount): SessionWithAccount => ({ ...found, account: { ...found.account } });

  return {
    count: () => s.count.get()!.n,
    list: () => s.list.all(),
    byId: (id: number) => s.byId.get(id),
    byUsername: (username: string) => s.byUsername.get(username),
    insert: (a: { username: string; display_name: string; role: Role; must_change_password: boolean; password_hash: string; created_at: string }) =>
      write(s.insert.get(a.username, a.display_name, a.role, a.must_change_password ? 1 : 0, a.password_hash, a.created_at)!.id),
    update: (id: number, a: { display_name: string; role: Role; enabled: boolean }) =>
      write(s.update.run(a.display_name, a.role, a.enabled ? 1 : 0, id)),
    setPassword: (id: number, hash: string, mustChange: boolean, at: string) => write(s.setPassword.run(hash, mustChange ? 1 : 0, at, id)),
    setLastLogin: (id: number, at: string) => write(s.setLastLogin.run(at, id)),
    enabledAdmins: () => s.enabledAdmins.get()!.n,
    insertSession: (accountId: number, tokenHash: string, now: number) => write(s.insertSession.run(accountId, tokenHash, now, now)),
    sessionByHash(tokenHash: string): SessionWithAccount | undefined {
      const version = s.dataVersion.get()!;
      if (version !== memory.version) {
        memory.sessions.clear();
        memory.version = version;
      }
      const known = memory.sessions.get(tokenHash);
      if (known) return copy(known);
      const row = s.sessionByHash.get(tokenHash);
      if (!row) return undefined;
      const found: SessionWithAccount = {
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
          password_changed_at: row.a_password_changed_at,
        },
      };
      // Not what a transaction sees before it commits: it may yet roll back.
      if (!db.inTransaction) {
        if (memory.sessions.size >= REMEMBERED_SESSIONS) memory.sessions.clear();
        memory.sessions.set(tokenHash, copy(found));
      }
      return found;
    },
    /** The session row only, without refreshing anything (the event stream's re-check). */
    sessionById: (id: number) => s.sessionById.get(id),
    touchSession: (id: number, now: number) => write(s.touchSession.run(now, id)),
    deleteSession: (id: number) => write(s.deleteSession.run(id)),
    deleteSessionsOf: (accountId: number) => write(s.deleteSessionsOf.run(accountId)),
  };
}

export type AccountRepo = ReturnType<typeof createAccountRepo>;
