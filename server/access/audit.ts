import type { AppContext } from '../context.js';
import type { AuditEntry } from '../contract/audit.js';
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

export type { AuditEntry };

type AuditRow = Omit<AuditEntry, 'detail'> & { detail: string };

/** The audit log: rows written in the caller's transaction, announced live once it commits. */
export function createAuditLog({ db, clock, bus }: Pick<AppContext, 'db' | 'clock' | 'bus'>) {
  const insert = db.prepare<[string, string | null, string, string | null, string | null, string]>(
    'INSERT INTO audit_log (at, actor, action, target, ip, detail) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const page = db.prepare<[number, number], AuditRow>('SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?');

  return {
    write(entry: AuditInput): void {
      const at = isoMillis(clock.now());
      const detail = entry.token ? { ...entry.detail, token: { id: entry.token.id, name: entry.token.name } } : (entry.detail ?? {});
      const text = JSON.stringify(detail);
      const { lastInsertRowid } = insert.run(at, entry.actor, entry.action, entry.target ?? null, entry.ip ?? null, text);
      bus.publish('audit.entry', { id: Number(lastInsertRowid), at, actor: entry.actor, action: entry.action, target: entry.target ?? null, ip: entry.ip ?? null, detail });
    },
    /** Newest first; `before` is an entry id. */
    list(limit: number, before = Number.MAX_SAFE_INTEGER): AuditEntry[] {
      return page.all(before, limit).map((row) => ({ ...row, detail: JSON.parse(row.detail) as Record<string, unknown> }));
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
