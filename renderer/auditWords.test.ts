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

describe('describeAudit: accounts and sessions', () => {
  it('says who signed in or failed to, and from where', () => {
    expect(describeAudit(entry('login.success', { target: 'alice', ip: '127.0.0.1' }))).toBe('alice signed in from 127.0.0.1');
    expect(describeAudit(entry('login.failure', { actor: null, target: 'bob', ip: '127.0.0.1' }))).toBe('login failed for bob from 127.0.0.1');
    expect(describeAudit(entry('login.failure', { actor: null, target: 'bob' }))).toBe('login failed for bob');
    expect(describeAudit(entry('logout', { target: 'alice' }))).toBe('alice signed out');
  });

  it('names setup, user creation and each account change', () => {
    expect(describeAudit(entry('setup', { actor: null, target: 'alice', ip: '127.0.0.1', detail: { id: 1, role: 'administrator' } }))).toBe(
      'alice was created as the first administrator (setup from 127.0.0.1)',
    );
    expect(describeAudit(entry('user.create', { target: 'bob', detail: { id: 2, role: 'viewer' } }))).toBe('alice created user bob (viewer)');
    expect(describeAudit(entry('user.update', { target: 'bob', detail: { id: 2, changes: { role: { from: 'viewer', to: 'operator' } } } }))).toBe(
      'alice changed user bob: role viewer → operator',
    );
    expect(describeAudit(entry('user.update', { target: 'bob', detail: { id: 2, changes: { enabled: { from: true, to: false } } } }))).toBe('alice disabled user bob');
    expect(describeAudit(entry('user.update', { target: 'bob', detail: { id: 2, changes: { enabled: { from: false, to: true } } } }))).toBe('alice enabled user bob');
    expect(
      describeAudit(
        entry('user.update', {
          target: 'bob',
          detail: { id: 2, changes: { display_name: { from: 'Bob', to: 'Robert' }, enabled: { from: true, to: false } } },
        }),
      ),
    ).toBe('alice changed user bob: disabled, display name "Bob" → "Robert"');
    expect(describeAudit(entry('user.update', { target: 'bob', detail: { id: 2, changes: {} } }))).toBe('alice saved user bob without changes');
    expect(describeAudit(entry('user.reset_password', { target: 'bob', detail: { id: 2 } }))).toBe('alice reset the password of bob');
    expect(describeAudit(entry('user.revoke_sessions', { target: 'bob', detail: { id: 2 } }))).toBe('alice signed bob out everywhere');
    expect(describeAudit(entry('password.change', { target: 'alice' }))).toBe('alice changed their own password');
    expect(describeAudit(entry('recovery', { actor: null, target: 'alice', detail: { id: 1, via: 'recovery command' } }))).toBe(
      'the password of alice was reset with the recovery command',
    );
  });
});

describe('describeAudit: management requests', () => {
  it('instances: created, changed (with the fields when known), deleted', () => {
    expect(describeAudit(request('POST', '/api/instances', 201, { target: 'instance 102' }))).toBe('alice created instance 102');
    expect(describeAudit(request('POST', '/api/instances', 201))).toBe('alice created a new instance');
    expect(describeAudit(request('PUT', '/api/instances/102', 200, { target: 'instance 102', detail: { fields: ['state'] } }))).toBe(
      'alice changed instance 102: state',
    );
    expect(describeAudit(request('PUT', '/api/instances/102', 200, { detail: { changes: { state: {}, stack: {} } } }))).toBe('alice changed instance 102: state, stack');
    expect(describeAudit(request('PUT', '/api/instances/102', 200, { target: '102' }))).toBe('alice changed instance 102');
    expect(describeAudit(request('DELETE', '/api/instances/102', 204, { target: 'instance:102' }))).toBe('alice deleted instance 102');
  });

  it('jobs: settings and run now', () => {
    expect(describeAudit(request('PUT', '/api/jobs/3', 200, { target: 'tailscale_sync' }))).toBe('alice changed the settings of job tailscale_sync');
    expect(describeAudit(request('PUT', '/api/jobs/3', 200))).toBe('alice changed the settings of job 3');
    expect(describeAudit(request('POST', '/api/jobs/3/run', 200, { target: 'job semaphore_sync' }))).toBe('alice ran job semaphore_sync now');
  });

  it('jobs by the name recorded with the entry; a preview as a dry run; a save that changed nothing as such', () => {
    const named = (detail: Record<string, unknown>) => ({ target: 'job 1', detail: { name: 'Tailscale sync', ...detail } });
    expect(describeAudit(request('PUT', '/api/jobs/1', 200, named({ fields: ['schedule'] })))).toBe('alice changed the settings of job “Tailscale sync”: schedule');
    expect(describeAudit(request('PUT', '/api/jobs/1', 200, named({ fields: [] })))).toBe('alice saved the settings of job “Tailscale sync” without changes');
    expect(describeAudit(request('POST', '/api/jobs/1/run', 200, named({})))).toBe('alice ran job “Tailscale sync” now');
    expect(describeAudit(request('POST', '/api/jobs/1/run', 200, named({ dry_run: true })))).toBe(
      'alice previewed a run of job “Tailscale sync” (dry run, nothing changed)',
    );
  });

  it('names the API token an entry was made with', () => {
    const token = { id: 4, name: 'ci' };
    expect(describeAudit(request('POST', '/api/instances', 201, { target: 'instance 7', detail: { token } }))).toBe('alice created instance 7 (with API token “ci”)');
    expect(describeAudit(entry('host.update', { target: 'host:2', detail: { host: 'pve2', token, sync_registry: true } }))).toBe(
      'alice changed the settings of host pve2 (with API token “ci”)',
    );
  });

  it('import, export, sign-out and anything else as method, path and status', () => {
    expect(describeAudit(request('POST', '/api/import', 200))).toBe('alice imported a backup, replacing the registry');
    expect(describeAudit(request('GET', '/api/export', 200))).toBe('alice downloaded a backup');
    expect(describeAudit(request('POST', '/api/auth/logout', 204))).toBe('alice signed out');
    expect(describeAudit(request('POST', '/api/users/4/revoke-sessions', 204))).toBe('alice sent POST /api/users/4/revoke-sessions (204)');
    expect(describeAudit(request('POST', '/api/hosts/enrollment-tokens', 201))).toBe('alice created a host enrollment token');
    expect(describeAudit(request('DELETE', '/api/hosts/enrollment-tokens/7', 204))).toBe('alice revoked host enrollment token 7');
    expect(describeAudit(request('DELETE', '/api/hosts/2', 202))).toBe('alice deleted host 2');
    expect(describeAudit(request('POST', '/api/something/odd/deep/path', 202, { target: 'x' }))).toBe('alice sent POST /api/something/odd/deep/path (202) for x');
    expect(describeAudit(entry('request', { detail: {} }))).toBe('alice sent ? ?');
    expect(describeAudit(request('DELETE', '/api/instances/%zz', 204))).toBe('alice deleted instance %zz');
  });

  it('an action it does not know is still shown, not dropped', () => {
    expect(describeAudit(entry('backup.something_new', { target: 'pve1' }))).toBe('alice: backup.something_new pve1');
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

describe('describeAudit: API tokens and hosts', () => {
  it('names token creation and revocation by the token name', () => {
    expect(describeAudit(entry('token.create', { target: 'alice', detail: { id: 3, name: 'nightly backup', role: 'administrator' } }))).toBe(
      'alice created API token "nightly backup" (administrator)',
    );
    expect(describeAudit(entry('token.revoke', { target: 'alice', detail: { id: 3, name: 'nightly backup' } }))).toBe('alice revoked API token "nightly backup"');
    expect(describeAudit(entry('token.revoke', { target: 'bob', detail: { id: 4, name: 'ci' } }))).toBe('alice revoked API token "ci" of bob');
  });

  it('names what happened to which host', () => {
    expect(describeAudit(entry('enrollment_token.create', { target: 'enrollment_token:1', detail: { name: 'pve1' } }))).toBe('alice created a host enrollment token "pve1"');
    // By name: the acting agent's, or the one recorded with the entry.
    expect(describeAudit(entry('host.enroll', { actor: 'agent:pve1', target: 'host:7', ip: '127.0.0.1' }))).toBe('host pve1 enrolled from 127.0.0.1');
    expect(describeAudit(entry('host.delete', { target: 'host:7', detail: { host: 'pve1' } }))).toBe('alice started removing host pve1');
    expect(describeAudit(entry('host.force_delete', { target: 'host:7', detail: { host: 'pve1' } }))).toBe('alice force-removed host pve1 (no receipt)');
    expect(describeAudit(entry('host.deleted', { actor: 'agent:pve1', target: 'host:7' }))).toBe('host pve1 confirmed its removal');
    expect(describeAudit(entry('host.upgrade_failed', { actor: null, target: 'host:7', detail: { host: 'pve1', reason: 'no heartbeat' } }))).toBe(
      'the upgrade of host pve1 failed: no heartbeat',
    );
    expect(describeAudit(entry('host.drift_apply', { target: 'host:7', detail: { applied: [101], actor: 'agent:pve1' } }))).toBe('alice applied registry drift from host pve1');
    // Entries written before names were recorded fall back to the id.
    expect(describeAudit(entry('host.delete', { target: 'host:7' }))).toBe('alice started removing host 7');
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
