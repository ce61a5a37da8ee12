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

export function createAuditLog(db: Db, clock: Clock) {
  const insert = db.prepare<[string, string | null, string, string | null, string | null, string], void>(
    'INSERT INTO audit_log (at, actor, action, target, ip, detail) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const page = db.prepare<[number, number], AuditRow>('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?');
  return {
    write(entry: AuditInput): void {
      insert.run(isoMillis(clock.now()), entry.actor, entry.action, entry.target ?? null, entry.ip ?? null, JSON.stringify(entry.detail ?? {}));
    },
    /** Newest first; `before` is an entry id. */
    list(limit: number, before = Number.MAX_SAFE_INTEGER): AuditEntry[] {
      return page.all(before, limit).map((row) => ({ ...row, detail: JSON.parse(row.detail) as Record<string, unknown> }));
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
