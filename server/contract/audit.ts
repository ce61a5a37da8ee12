import { liveEvent } from './events.js';

/** An audit log entry as GET /api/audit lists it and the stream announces it. */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
}

export const auditEvents = {
  // "audit.entry (the last only to administrators)": users.manage is the administrators' capability.
  'audit.entry': liveEvent<AuditEntry>('users.manage'),
};
