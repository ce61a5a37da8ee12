import type { Bus } from './bus.js';
import type { AuditChange, AuditEntry, AuditSubject } from './contract/audit.js';
import type { Db } from './db/database.js';
import { actorName, actorType, currentContext, type Actor } from './http/request-context.js';
import { isoMillis, type Clock } from './time.js';

export type { AuditChange, AuditEntry, AuditSubject, Actor };

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
  | `notification_channel.${string}`
  // server keys and cloud configs (server/provisioning)
  | `server_key.${string}`
  | `cloud_config.${string}`
  // scripts (server/scripts): script.create, script.update, script.delete
  | `script.${string}`
  // the file cache (server/files): file.upload, file.evict, file.delete
  | `file.${string}`
  // campaigns (server/campaigns): campaign.create, campaign.pause, campaign.resume, campaign.cancel
  | `campaign.${string}`
  // collections (server/collections): collection.create, collection.update, collection.delete
  | `collection.${string}`
  // fleet-health policies (server/fleet): policy.update
  | `policy.${string}`
  // an instance changed by no request: a sync job's run
  | `instance.${string}`;

/**
 * One change, as a feature records it. Who acted, from where and through which request come from
 * the work's context (server/http/request-context.ts): the route table sets it for a request,
 * `runAs` for a job, the sweep or the recovery command. `actor` and `ip` are given only where the
 * feature knows better: a sign-in names the person who signed in, an agent's first call its new host.
 */
export interface ChangeInput {
  action: AuditAction;
  /** What changed, named as it is now; an event that changes no object has a subject of its own (`login`). */
  subject: AuditSubject;
  /** The whole sentence a person reads, actor included: "alice changed instance 102 “web”". */
  summary: string;
  /** Field by field; a secret field is named without its values. */
  changes?: AuditChange[] | undefined;
  /** Names, ids, methods and paths only: never a password, token, cookie or request body. */
  detail?: Record<string, unknown>;
  actor?: Actor;
  ip?: string | null;
}

/** How a summary names who acted: "alice", "agent:pve1", "job:tailscale_sync", else "someone". */
export const nameOf = (actor: Actor = currentContext().actor): string => actorName(actor) ?? 'someone';

/** The entry's `target` as the API has always carried it, from its subject: a username, else "instance 102". */
const targetOf = (subject: AuditSubject): string => (subject.type === 'user' || subject.type === 'login' ? subject.name ?? subject.id : `${subject.type} ${subject.id}`);

type AuditRow = Omit<AuditEntry, 'detail' | 'subject' | 'changes'> & {
  detail: string;
  changes: string;
  subject_type: string | null;
  subject_id: string | null;
  subject_name: string | null;
};

/** Reads the field changes of entries whose subject's owner keeps them (the registry's instance history). */
export type ChangeReader = (entryIds: number[]) => Map<number, AuditChange[]>;

/**
 * The one change log (NetBox's ObjectChange): each feature writes its entry inside the transaction
 * of the change it records, so the two commit together or not at all; the entry is announced live
 * once that transaction commits. `request` entries get the request's method, path and status.
 *
 * A subject type whose owner keeps its field changes itself (`keptBy`) has them written once, there,
 * each row pointing at its entry; the log reads them back from the owner and stores no copy.
 */
export function createAuditLog({ db, clock, bus }: { db: Db; clock: Clock; bus: Pick<Bus, 'publish'> }) {
  const insert = db.prepare<[string, string | null, string | null, string, string, string | null, string, string, string, string | null, string, string, string | null]>(
    `INSERT INTO audit_log (at, actor, actor_type, action, target, ip, detail, subject_type, subject_id, subject_name, summary, changes, request_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const page = db.prepare<[number, number], AuditRow>(
    `SELECT id, at, actor, actor_type, action, target, ip, detail, subject_type, subject_id, subject_name, summary, changes, request_id
       FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?`,
  );
  const keptBy = new Map<string, ChangeReader>();

  return {
    /** Records one change and answers its entry's id (the owner of a `keptBy` subject links its rows to it). */
    write(entry: ChangeInput): number {
      const at = isoMillis(clock.now());
      const context = currentContext();
      const actor = entry.actor ?? context.actor;
      const ip = entry.ip !== undefined ? entry.ip : context.ip;
      const { request } = context;
      let detail = entry.detail ?? {};
      if (entry.action === 'request' && request) detail = { method: request.method, path: request.path, status: request.status(), ...detail };
      if (actor.type === 'token') detail = { ...detail, token: { id: actor.token.id, name: actor.token.name } };
      const { subject } = entry;
      const changes = entry.changes ?? [];
      const stored = keptBy.has(subject.type) ? [] : changes;
      const name = actorName(actor);
      const type = actorType(actor);
      const target = targetOf(subject);
      const { lastInsertRowid } = insert.run(
        at, name, type, entry.action, target, ip, JSON.stringify(detail),
        subject.type, subject.id, subject.name, entry.summary, JSON.stringify(stored), request?.id ?? null,
      );
      const id = Number(lastInsertRowid);
      bus.publish('audit.entry', {
        id, at, actor: name, actor_type: type, action: entry.action, target, ip, detail, subject, summary: entry.summary, changes, request_id: request?.id ?? null,
      });
      return id;
    },
    /** Declares that `subjectType`'s owner keeps its field changes, and how to read them for entries. */
    keepChangesWith(subjectType: string, read: ChangeReader): void {
      keptBy.set(subjectType, read);
    },
    /** Newest first; `before` is an entry id. */
    list(limit: number, before = Number.MAX_SAFE_INTEGER): AuditEntry[] {
      const entries = page.all(before, limit).map(({ subject_type, subject_id, subject_name, detail, changes, ...row }) => ({
        ...row,
        detail: JSON.parse(detail) as Record<string, unknown>,
        subject: subject_type === null ? null : { type: subject_type, id: subject_id ?? '', name: subject_name },
        changes: JSON.parse(changes) as AuditChange[],
      }));
      for (const [type, read] of keptBy) {
        const ids = entries.filter((e) => e.subject?.type === type).map((e) => e.id);
        if (ids.length === 0) continue;
        const found = read(ids);
        for (const e of entries) if (found.has(e.id)) e.changes = found.get(e.id)!;
      }
      return entries;
    },
  };
}

export type AuditLog = ReturnType<typeof createAuditLog>;
