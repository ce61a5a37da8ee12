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

/** An audit log entry as GET /api/audit lists it and the stream announces it. */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
  /** The changed thing; null on entries about no one thing, and on entries written before subjects were recorded. */
  subject: AuditSubject | null;
  /** The change in words, as a person reads it ("alice changed instance 102 “web”"); null on older entries. */
  summary: string | null;
  /** Field by field, before and after; empty when the entry records no field change. */
  changes: AuditChange[];
  /** The X-Request-Id of the request that made the change (also in its log line); null when no request did. */
  request_id: string | null;
}

export const auditEvents = {
  // "audit.entry (the last only to administrators)": users.manage is the administrators' capability.
  'audit.entry': liveEvent<AuditEntry>('users.manage'),
};
