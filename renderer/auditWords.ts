/**
 * Audit entries in words: who did what to which thing ("alice changed instance 102 “web”",
 * "login failed for bob from 127.0.0.1"), what changed field by field, and the filters of the audit
 * page. Pure, tested in auditWords.test.ts.
 *
 * An entry says itself what it was about: the server writes its summary, subject and changes with
 * the change. Entries written before it did (their `summary` is null) are worded from their action
 * and detail, and a `request` entry of that time from its method and path (describeRequest).
 */
import { userUpdateWords, type AuditChange, type AuditEntry, type UserChanges } from '../server/contract/audit';

type Entry = Pick<AuditEntry, 'actor' | 'action' | 'target' | 'ip' | 'detail'> & Partial<Pick<AuditEntry, 'summary' | 'changes'>>;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined);

/** The things a management path names, by its first segment after /api/. */
const KINDS: Record<string, string> = {
  instances: 'instance',
  jobs: 'job',
  users: 'user',
  hosts: 'host',
  tokens: 'API token',
  snapshots: 'snapshot',
};

/**
 * "instance 102" for a request: the server's `target` where it names one (as "instance 102",
 * "instance:102" or a bare "102"), else the id in the path.
 */
function thing(kind: string | undefined, pathId: string | undefined, target: string | undefined): string | undefined {
  if (target) {
    const named = /^([a-z_ ]+)[: ](.+)$/i.exec(target);
    if (named && (!kind || named[1]!.toLowerCase().replace(/_/g, ' ') === kind.toLowerCase())) return `${named[1]!.replace(/_/g, ' ')} ${named[2]}`;
    return kind ? `${kind} ${target}` : target;
  }
  if (kind && pathId) return `${kind} ${pathId}`;
  return undefined;
}

/** The changed field names a request's detail carries, if any: `fields: [...]` or `changes` (a list or an object). */
function changedFields(detail: Record<string, unknown>): string[] {
  const list = detail.fields ?? detail.changes ?? detail.changed;
  if (Array.isArray(list)) return list.filter((f): f is string => typeof f === 'string');
  if (list && typeof list === 'object') return Object.keys(list);
  return [];
}

/** A `request` entry written before entries carried their own summary: worded from its method and path. */
function describeRequest(who: string, entry: Entry): string {
  const detail = entry.detail ?? {};
  const method = text(detail.method)?.toUpperCase() ?? '?';
  const path = text(detail.path) ?? '?';
  const status = text(detail.status);
  const segments = path.replace(/^\/api\//, '').split('/').filter(Boolean);
  const [resource, id, sub, ...rest] = segments.map((s) => decodeSafe(s));
  const kind = resource ? KINDS[resource] : undefined;
  const target = text(entry.target);
  // A job's name when the entry recorded it (entries since issue 25): "job “Tailscale sync”".
  const name = text(detail.name);
  const named = kind && name && resource === 'jobs' ? `${kind} “${name}”` : thing(kind, id, target);
  const fields = changedFields(detail);
  const withFields = (sentence: string) => (fields.length ? `${sentence}: ${fields.join(', ')}` : sentence);

  if (resource === 'import' && method === 'POST') return `${who} imported a backup, replacing the registry`;
  if (resource === 'export') return `${who} downloaded a backup`;
  if (resource === 'auth' && id === 'logout') return `${who} signed out`;
  if (resource === 'hosts' && id === 'enrollment-tokens' && rest.length === 0) {
    if (method === 'POST' && sub === undefined) return `${who} created a host enrollment token`;
    if (method === 'DELETE' && sub) return `${who} revoked host enrollment token ${sub}`;
  }
  if (kind && rest.length === 0) {
    if (resource === 'jobs' && sub === 'run' && method === 'POST') {
      return detail.dry_run === true ? `${who} previewed a run of ${named ?? 'a job'} (dry run, nothing changed)` : `${who} ran ${named ?? 'a job'} now`;
    }
    if (sub === undefined) {
      if (method === 'POST' && id === undefined) return named ? `${who} created ${named}` : `${who} created a new ${kind}`;
      if ((method === 'PUT' || method === 'PATCH') && named) {
        if (resource === 'jobs' && Array.isArray(detail.fields) && fields.length === 0) return `${who} saved the settings of ${named} without changes`;
        return withFields(`${who} changed ${resource === 'jobs' ? 'the settings of ' : ''}${named}`);
      }
      if (method === 'DELETE' && named) return `${who} deleted ${named}`;
    }
  }
  return `${who} sent ${method} ${path}${status ? ` (${status})` : ''}${target ? ` for ${target}` : ''}`;
}

function decodeSafe(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * `host:7` as people read it: by its name where the entry has it (recorded with host actions, or the
 * acting agent's `agent:<hostname>`), else by its id.
 */
function hostOf(entry: Entry): string {
  const detail = entry.detail ?? {};
  const agent = [entry.actor, text(detail.actor)].find((a) => a?.startsWith('agent:'))?.slice('agent:'.length);
  const name = text(detail.host) ?? agent;
  if (name) return `host ${name}`;
  const id = /^host:(\d+)$/.exec(entry.target ?? '')?.[1];
  return id ? `host ${id}` : (text(entry.target) ?? 'a host');
}

/** "(with API token “ci”)" for an entry made with a personal API token. */
function viaToken(detail: Record<string, unknown>): string {
  const token = detail.token as { name?: unknown } | undefined;
  const name = token && typeof token === 'object' ? text(token.name) : undefined;
  return name ? ` (with API token “${name}”)` : '';
}

/** One audit entry as a sentence, naming the API token it was made with, if any. */
export function describeAudit(entry: Entry): string {
  return (entry.summary || describeEntry(entry)) + viaToken(entry.detail ?? {});
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

function describeEntry(entry: Entry): string {
  const who = entry.actor ?? 'someone';
  const target = text(entry.target) ?? 'an unknown account';
  const from = entry.ip ? ` from ${entry.ip}` : '';
  const detail = entry.detail ?? {};
  switch (entry.action) {
    case 'login.success':
      return `${entry.actor ?? target} signed in${from}`;
    case 'login.failure':
      return `login failed for ${target}${from}`;
    case 'logout':
      return `${entry.actor ?? target} signed out`;
    case 'setup':
      return `${target} was created as the first administrator (setup${from})`;
    case 'user.create':
      return `${who} created user ${target}${text(detail.role) ? ` (${text(detail.role)})` : ''}`;
    case 'user.update':
      return userUpdateWords(who, target, (detail.changes && typeof detail.changes === 'object' ? detail.changes : {}) as UserChanges);
    case 'user.reset_password':
      return `${who} reset the password of ${target}`;
    case 'user.revoke_sessions':
      return `${who} signed ${target} out everywhere`;
    case 'password.change':
      return entry.actor && entry.actor !== entry.target ? `${who} changed the password of ${target}` : `${target} changed their own password`;
    case 'recovery':
      return `the password of ${target} was reset with the recovery command`;
    case 'request':
      return describeRequest(who, entry);
    case 'token.create':
      return `${who} created API token "${text(detail.name) ?? '?'}"${text(detail.role) ? ` (${text(detail.role)})` : ''}`;
    case 'token.revoke':
      return `${who} revoked API token "${text(detail.name) ?? '?'}"${entry.target && entry.target !== entry.actor ? ` of ${entry.target}` : ''}`;
    case 'enrollment_token.create':
      return `${who} created a host enrollment token${text(detail.name) ? ` "${text(detail.name)}"` : ''}`;
    case 'enrollment_token.revoke':
      return `${who} revoked a host enrollment token`;
    case 'host.enroll':
    case 'host.rebind':
      return `${hostOf(entry)} enrolled${entry.action === 'host.rebind' ? ' again (re-bound)' : ''}${from}`;
    case 'host.update':
      return `${who} changed the settings of ${hostOf(entry)}`;
    case 'host.delete':
      return `${who} started removing ${hostOf(entry)}`;
    case 'host.force_delete':
      return `${who} force-removed ${hostOf(entry)} (no receipt)`;
    case 'host.deleted':
      return `${hostOf(entry)} confirmed its removal`;
    case 'host.revoke_token':
      return `${who} revoked the token of ${hostOf(entry)}`;
    case 'host.drift_apply':
      return `${who} applied registry drift from ${hostOf(entry)}`;
    case 'host.upgrade_request':
      return `${who} asked ${hostOf(entry)} to upgrade${text(detail.version) ? ` to ${text(detail.version)}` : ''}`;
    case 'host.upgrade_succeeded':
      return `${hostOf(entry)} upgraded${text(detail.version) ? ` to ${text(detail.version)}` : ''}`;
    case 'host.upgrade_failed':
      return `the upgrade of ${hostOf(entry)} failed${text(detail.reason) ? `: ${text(detail.reason)}` : ''}`;
    default:
      return `${who}: ${entry.action}${entry.target ? ` ${entry.target}` : ''}`;
  }
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
