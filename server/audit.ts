import type { Bus } from './bus.js';
import type { AuditChange, AuditEntry, AuditSubject } from './contract/audit.js';
import type { Db } from './db/database.js';
import { isoMillis, type Clock } from './time.js';

export type { AuditChange, AuditEntry, AuditSubject };

/** The HTTP request that made a change: its X-Request-Id, and for `request` entries its method, path and answer status. */
export interface RequestRef {
  id: string;
  method: string;
  path: string;
  status: number;
}

/** Who made a change, from where, and through which request: what an entry records beside the change itself. */
export interface Actor {
  /** A username, `agent:<hostname>`, or null when no one is signed in (a failed login, setup, the recovery command). */
  actor: string | null;
  ip: string | null;
  /** The personal API token the actor used (its id and name, never the token), joined to the detail as `token`. */
  token?: { id: number; name: string } | undefined;
  /** Set when the change came through the API; its id is the entry's `request_id`. */
  request?: RequestRef | undefined;
}

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
  // PRODUCT.md: "A successful management request (non-GET, 2xx) writes `request` with method, path and status."
  | 'request'
  | 'token.create'
  | 'token.revoke'
  // hosts and agents (server/hosts): host.enroll, host.delete, enrollment_token.create, ...
  | `host.${string}`
  | `enrollment_token.${string}`
  // sign-in methods (server/signin): totp.enable, totp.disable, passkey.add, passkey.rename, passkey.remove
  | `totp.${string}`
  | `passkey.${string}`
  | 'user.reset_second_factor'
  // alerts and notifications (server/alerts, server/notifications)
  | `alert_rule.${string}`
  | `notification_channel.${string}`;

export interface AuditInput extends Omit<Actor, 'ip'> {
  ip?: string | null;
  action: AuditAction;
  /** The entry's `target` as the API has always shown it: "instance 102", "host:7", a username. */
  target?: string | null;
  subject?: AuditSubject | undefined;
  /** The whole sentence a person reads, actor included: "alice changed instance 102 “web”". */
  summary?: string | undefined;
  changes?: AuditChange[] | undefined;
  /** Names, ids, methods and paths only: never a password, token, cookie or request body. */
  detail?: Record<string, unknown>;
}

/** How an entry names who acted, for summaries. */
export const nameOf = (actor: string | null): string => actor ?? 'someone';

type AuditRow = Omit<AuditEntry, 'detail' | 'subject' | 'changes'> & {
  detail: string;
  changes: string;
  subject_type: string | null;
  subject_id: string | null;
  subject_name: string | null;
};

/**
 * The one change log (NetBox's ObjectChange): each feature writes its entry inside the transaction
 * of the change it records, so the two commit together or not at all; the entry is announced live
 * once that transaction commits. `request` entries get the request's method, path and status.
 */
export function createAuditLog({ db, clock, bus }: { db: Db; clock: Clock; bus: Bus }) {
  const insert = db.prepare<[string, string | null, string, string | null, string | null, string, string | null, string | null, string | null, string | null, string, string | null]>(
    `INSERT INTO audit_log (at, actor, action, target, ip, detail, subject_type, subject_id, subject_name, summary, changes, request_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const page = db.prepare<[number, number], AuditRow>(
    `SELECT id, at, actor, action, target, ip, detail, subject_type, subject_id, subject_name, summary, changes, request_id
       FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?`,
  );

  return {
    write(entry: AuditInput): void {
      const at = isoMillis(clock.now());
      const { request } = entry;
      let detail = entry.detail ?? {};
      if (entry.action === 'request' && request) detail = { method: request.method, path: request.path, status: request.status, ...detail };
      if (entry.token) detail = { ...detail, token: { id: entry.token.id, name: entry.token.name } };
      const subject = entry.subject ?? null;
      const changes = entry.changes ?? [];
      const { lastInsertRowid } = insert.run(
        at, entry.actor, entry.action, entry.target ?? null, entry.ip ?? null, JSON.stringify(detail),
        subject?.type ?? null, subject?.id ?? null, subject?.name ?? null, entry.summary ?? null, JSON.stringify(changes), request?.id ?? null,
      );
      bus.publish('audit.entry', {
        id: Number(lastInsertRowid), at, actor: entry.actor, action: entry.action, target: entry.target ?? null, ip: entry.ip ?? null, detail,
        subject, summary: entry.summary ?? null, changes, request_id: request?.id ?? null,
      });
    },
    /** Newest first; `before` is an entry id. */
    list(limit: number, before = Number.MAX_SAFE_INTEGER): AuditEntry[] {
      return page.all(before, limit).map(({ subject_type, subject_id, subject_name, detail, changes, ...row }) => ({
        ...row,
        detail: JSON.parse(detail) as Record<string, unknown>,
        subject: subject_type === null ? null : { type: subject_type, id: subject_id ?? '', name: subject_name },
        changes: JSON.parse(changes) as AuditChange[],
      }));
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
