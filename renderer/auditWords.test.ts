import { describe, expect, it } from 'vitest';
import { describeAudit, describeChanges, filterAudit, NO_ACTOR } from './auditWords';

const entry = (action: string, more: { actor?: string | null; target?: string | null; ip?: string | null; detail?: Record<string, unknown> } = {}) => ({
  actor: more.actor === undefined ? 'alice' : more.actor,
  action,
  target: more.target ?? null,
  ip: more.ip ?? null,
  detail: more.detail ?? {},
});
const request = (method: string, path: string, status: number, more: { target?: string; detail?: Record<string, unknown> } = {}) =>
  entry('request', { target: more.target ?? null, detail: { method, path, status, ...more.detail } });

describe('describeAudit: the page parses nothing', () => {
  it('words an entry from its summary only, never from its target or its request path', () => {
    // A target and a path that once were read for words: now they are not.
    const old = entry('request', { target: 'instance 102', detail: { method: 'PUT', path: '/api/instances/102', status: 200, fields: ['state'] } });
    expect(describeAudit(old)).toBe('alice: request');
    expect(describeAudit(entry('host.delete', { target: 'host:7', detail: { host: 'pve1' } }))).toBe('alice: host.delete');
    expect(describeAudit({ ...entry('host.delete', { target: 'host:7' }), summary: 'alice started removing host pve1' })).toBe('alice started removing host pve1');
  });
});

describe('filterAudit', () => {
  const rows = [
    { id: 3, at: '2026-11-23T10:00:00.000Z', ...entry('request', { detail: { method: 'PUT', path: '/api/instances/1', status: 200 } }) },
    { id: 2, at: '2026-11-23T09:00:00.000Z', ...entry('login.failure', { actor: null, target: 'bob' }) },
    { id: 1, at: '2026-11-22T09:00:00.000Z', ...entry('login.success', { actor: 'carol', target: 'carol' }) },
  ];
  const ids = (list: { id: number }[]) => list.map((r) => r.id);

  it('by actor (or none), action and time range, each optional', () => {
    expect(ids(filterAudit(rows, { actor: '', action: '' }))).toEqual([3, 2, 1]);
    expect(ids(filterAudit(rows, { actor: 'alice', action: '' }))).toEqual([3]);
    expect(ids(filterAudit(rows, { actor: NO_ACTOR, action: '' }))).toEqual([2]);
    expect(ids(filterAudit(rows, { actor: '', action: 'login.success' }))).toEqual([1]);
    expect(ids(filterAudit(rows, { actor: '', action: '', from: Date.parse('2026-11-23T00:00:00Z') }))).toEqual([3, 2]);
    expect(ids(filterAudit(rows, { actor: '', action: '', to: Date.parse('2026-11-23T09:00:00Z') }))).toEqual([2, 1]);
    expect(ids(filterAudit(rows, { actor: 'alice', action: 'login.success' }))).toEqual([]);
  });
});

describe('describeAudit: entries that carry their own words', () => {
  const worded = (action: string, summary: string, more: { changes?: { field: string; before?: unknown; after?: unknown }[]; detail?: Record<string, unknown> } = {}) => ({
    ...entry(action, { target: 'instance 102', detail: { method: 'PUT', path: '/api/instances/102', status: 200, ...more.detail } }),
    summary,
    changes: more.changes ?? [],
  });

  it('says the summary written with the change, not what its path would suggest', () => {
    expect(describeAudit(worded('request', 'alice changed instance 102 “web”'))).toBe('alice changed instance 102 “web”');
    // The path says instances; the summary (the server's words at the time) wins.
    expect(describeAudit(worded('request', 'alice took snapshot homefleet-2026.db'))).toBe('alice took snapshot homefleet-2026.db');
    expect(describeAudit(worded('user.update', 'alice disabled user bob'))).toBe('alice disabled user bob');
  });

  it('still names the API token the change was made with', () => {
    expect(describeAudit(worded('request', 'alice created instance 7 “db”', { detail: { token: { id: 4, name: 'ci' } } }))).toBe('alice created instance 7 “db” (with API token “ci”)');
  });

  it('words each changed field with its values, and a secret field without them', () => {
    const changes = [
      { field: 'state', before: 'deployed', after: 'testing' },
      { field: 'tailscale_ip', before: '', after: '100.64.0.1' },
      { field: 'enabled', before: true, after: false },
      { field: 'schedule', before: 15, after: 30 },
      { field: 'config.api_token' },
    ];
    expect(describeChanges({ changes })).toEqual([
      'state: “deployed” → “testing”',
      'tailscale ip: empty → “100.64.0.1”',
      'enabled: yes → no',
      'schedule: 15 → 30',
      'config.api token: changed (a secret, not shown)',
    ]);
    expect(describeChanges({ changes: [] })).toEqual([]);
    expect(describeChanges({})).toEqual([]);
  });
});
