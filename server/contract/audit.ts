import { liveEvent } from './events.js';

/** What an audit entry is about, named as it was when the change was made: `{type: 'instance', id: '102', name: 'web'}`. */
export interface AuditSubject {
  type: string;
  id: string;
  name: string | null;
}

/**
 * One changed field. A secret field (a job's API key, a password) is named without its values:
 * `before` and `after` are then absent, never the secret.
 */
export interface AuditChange {
  field: string;
  before?: unknown;
  after?: unknown;
}

/** What kind of actor made a change: a person (signed in, or through a personal API token), a host's agent, a sync job, the system. */
export type ActorType = 'user' | 'token' | 'agent' | 'job' | 'system';

/**
 * Who makes a change: a signed-in person, a person through a personal API token, the agent of a
 * host, a sync job, the system itself (the host sweep, the recovery command, an automatic upgrade),
 * or no one yet (a failed sign-in on a public route).
 */
export type Actor =
  | { type: 'user'; id: number; name: string }
  | { type: 'token'; id: number; name: string; token: { id: number; name: string } }
  | { type: 'agent'; id: number; name: string }
  | { type: 'job'; id: number; name: string }
  | { type: 'system'; name: string }
  | { type: 'anonymous' };

/** An audit log entry as GET /api/audit lists it and the stream announces it. */
export interface AuditEntry {
  id: number;
  at: string;
  /** The username, `agent:<hostname>`, `job:<key>`; null for the system and for no one (a failed sign-in). */
  actor: string | null;
  /** null on a failed sign-in and on entries written before actors were typed. */
  actor_type: ActorType | null;
  action: string;
  target: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
  /** The changed thing, or what an event is about (`login` for a sign-in attempt); null only on an entry no migration could name. */
  subject: AuditSubject | null;
  /** The change in words, as a person reads it ("alice changed instance 102 “web”"). */
  summary: string | null;
  /** Field by field, before and after; empty when the entry records no field change. */
  changes: AuditChange[];
  /** The X-Request-Id of the request that made the change (also in its log line); null when no request did. */
  request_id: string | null;
}

/** A user.update entry's `detail.changes`: each changed account field, from and to. */
export type UserChanges = Partial<Record<'enabled' | 'role' | 'display_name', { from?: unknown; to?: unknown }>>;

/**
 * A user.update in words, the same for the entry's summary (server) and for entries written before
 * summaries (the audit page): "alice changed user bob: role viewer → operator", "alice disabled user bob".
 */
export function userUpdateWords(who: string, user: string, changes: UserChanges): string {
  const parts: string[] = [];
  if (changes.enabled) parts.push(changes.enabled.to ? 'enabled' : 'disabled');
  if (changes.role) parts.push(`role ${String(changes.role.from)} → ${String(changes.role.to)}`);
  if (changes.display_name) parts.push(`display name "${String(changes.display_name.from)}" → "${String(changes.display_name.to)}"`);
  if (parts.length === 1 && changes.enabled) return `${who} ${parts[0]} user ${user}`;
  return parts.length ? `${who} changed user ${user}: ${parts.join(', ')}` : `${who} saved user ${user} without changes`;
}

export const auditEvents = {
  // "audit.entry (the last only to administrators)": users.manage is the administrators' capability.
  'audit.entry': liveEvent<AuditEntry>('users.manage'),
};
