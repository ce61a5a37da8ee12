import type { AppEvents } from '../context.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../time.js';
import { isoMillis } from '../time.js';

export type AuditAction =
  | 'login.success'
  | 'login.failure'
  | 'logout'
  | 'setup'
  | 'user.create'
  | 'user.update'
  | 'user.reset_password'
  | 'user.revoke_sessions'
  | 'password.change'
  | 'recovery'
  | 'request'
  | 'token.create'
  | 'token.revoke'
  // hosts and agents (server/hosts): host.enroll, host.delete, enrollment_token.create, ...
  | `host.${string}`
  | `enrollment_token.${string}`;

export interface AuditInput {
  actor: string | null;
  action: AuditAction;
  target?: string | null;
  ip?: string | null;
  /** Names, ids, methods and paths only: never a password, token, cookie or request body. */
  detail?: Record<string, unknown>;
  /** The personal API token the actor used (its id and name, never the token), joined to the detail as `token`. */
  token?: { id: number; name: string } | undefined;
}

export interface AuditEntry {
  id: number;
  at: string;
  actor: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
}

type AuditRow = Omit<AuditEntry, 'detail'> & { detail: string };

export function createAuditLog(db: Db, clock: Clock, events?: AppEvents) {
  const insert = db.prepare<[string, string | null, string, string | null, string | null, string]>(
    'INSERT INTO audit_log (at, actor, action, target, ip, detail) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const page = db.prepare<[number, number], AuditRow>('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?');
  const stored = db.prepare<[number, string, string, string | null, string | null, string], { id: number }>(
    'SELECT id FROM audit_log WHERE id = ? AND at = ? AND action = ? AND actor IS ? AND target IS ? AND detail = ?',
  );

  /**
   * An entry written inside a transaction exists only once that transaction commits. It is announced
   * on the next turn of the event loop (better-sqlite3's transactions never span one), and only when
   * its row is still there as written, so the change of a rolled-back transaction never shows up live
   * (a later entry may have taken a rolled-back entry's id: its row then differs).
   */
  function announce(entry: AuditEntry, detail: string): void {
    if (!db.inTransaction) return void events!.emit('audit.entry', entry);
    setImmediate(() => {
      if (db.open && stored.get(entry.id, entry.at, entry.action, entry.actor, entry.target, detail)) events!.emit('audit.entry', entry);
    });
  }

  return {
    write(entry: AuditInput): void {
      const at = isoMillis(clock.now());
      const detail = entry.token ? { ...entry.detail, token: { id: entry.token.id, name: entry.token.name } } : (entry.detail ?? {});
      const text = JSON.stringify(detail);
      const { lastInsertRowid } = insert.run(at, entry.actor, entry.action, entry.target ?? null, entry.ip ?? null, text);
      if (events) announce({ id: Number(lastInsertRowid), at, actor: entry.actor, action: entry.action, target: entry.target ?? null, ip: entry.ip ?? null, detail }, text);
    },
    /** Newest first; `before` is an entry id. */
    list(limit: number, before = Number.MAX_SAFE_INTEGER): AuditEntry[] {
      return page.all(before, limit).map((row) => ({ ...row, detail: JSON.parse(row.detail) as Record<string, unknown> }));
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
