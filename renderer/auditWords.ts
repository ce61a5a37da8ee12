/**
 * Audit entries in words: the server's summary of each entry ("alice changed instance 102 “web”",
 * "login failed for bob from 127.0.0.1"), what changed field by field, and the filters of the audit
 * page. The server writes every entry's summary, subject and changes (older entries got theirs from
 * a migration), so nothing here reads a target or a request path. Pure, tested in auditWords.test.ts.
 */
import type { AuditChange, AuditEntry } from '../server/contract/audit';

type Entry = Pick<AuditEntry, 'actor' | 'action' | 'detail'> & Partial<Pick<AuditEntry, 'summary' | 'changes'>>;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined);

/** "(with API token “ci”)" for an entry made with a personal API token. */
function viaToken(detail: Record<string, unknown>): string {
  const token = detail.token as { name?: unknown } | undefined;
  const name = token && typeof token === 'object' ? text(token.name) : undefined;
  return name ? ` (with API token “${name}”)` : '';
}

/** One audit entry as a sentence, naming the API token it was made with, if any. */
export function describeAudit(entry: Entry): string {
  return (entry.summary || `${entry.actor ?? 'someone'}: ${entry.action}`) + viaToken(entry.detail ?? {});
}

/** A recorded value as the page shows it: texts quoted, an empty one said so. */
function valueWords(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'empty';
  if (typeof value === 'string') return `“${value}”`;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** An entry's changed fields, one line each: "state: “deployed” → “testing”"; a secret field without its values. */
export function describeChanges(entry: Pick<Entry, 'changes'>): string[] {
  return (entry.changes ?? []).map((change: AuditChange) => {
    const field = change.field.replace(/_/g, ' ');
    if (!('before' in change) && !('after' in change)) return `${field}: changed (a secret, not shown)`;
    return `${field}: ${valueWords(change.before)} → ${valueWords(change.after)}`;
  });
}

/** The action filter's choices, in words. */
export const ACTION_LABELS: Record<string, string> = {
  'login.success': 'Sign-ins',
  'login.failure': 'Failed sign-ins',
  logout: 'Sign-outs',
  setup: 'First-administrator setup',
  'user.create': 'Users created',
  'user.update': 'Users changed',
  'user.reset_password': 'Passwords reset',
  'user.revoke_sessions': 'Sessions revoked',
  'password.change': 'Own password changed',
  recovery: 'Recovery command',
  request: 'Management changes (instances, jobs, import…)',
  'token.create': 'API tokens created',
  'token.revoke': 'API tokens revoked',
  'enrollment_token.create': 'Host enrollment tokens created',
  'host.enroll': 'Hosts enrolled',
  'host.delete': 'Host removals',
  'host.guest_action': 'Guest actions',
  'host.guest_action_forced': 'Guest actions forced outside a maintenance window',
  'host.operation_cancel': 'Operations cancelled',
  'host.maintenance': 'Maintenance policies changed',
  'host.script_run': 'Scripts run on hosts and guests',
  'script.create': 'Scripts added',
  'script.update': 'Scripts changed',
  'script.delete': 'Scripts deleted',
};

export interface AuditFilter {
  /** A username; "" for any, NO_ACTOR for entries without one (failed sign-ins, setup, recovery). */
  actor: string;
  action: string;
  /** Epoch ms bounds, inclusive; undefined for open. */
  from?: number | undefined;
  to?: number | undefined;
}

export const NO_ACTOR = '\u0000none';

export function filterAudit<T extends Entry & { at: string }>(rows: readonly T[], filter: AuditFilter): T[] {
  return rows.filter((row) => {
    if (filter.actor === NO_ACTOR ? row.actor !== null : filter.actor && row.actor !== filter.actor) return false;
    if (filter.action && row.action !== filter.action) return false;
    const at = Date.parse(row.at);
    if (filter.from !== undefined && at < filter.from) return false;
    if (filter.to !== undefined && at > filter.to) return false;
    return true;
  });
}
