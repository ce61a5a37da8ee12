// Each fleet-health check's pass, fail and unknown, with the reason a person reads (PRODUCT.md
// "Fleet health: policies across every source"), as plain functions of what the sources said.
import { describe, expect, it } from 'vitest';
import { checkInstance, duration, mergeChecks, type FleetFacts, type HostFacts, type InstanceFacts } from './checks.js';

const now = Date.parse('2026-11-22T10:00:00Z');
const H = 3_600_000;
const host = (over: Partial<HostFacts> = {}): HostFacts => ({
  id: 1, name: 'pve1', online: true, last_heartbeat_at: now - 10_000, agent_version: '1.0.0', agent_channel: 'stable', agent_pin: null, offered: undefined,
  backups_reported_at: now - H, jobs: [{ host_id: 1, id: 'backup-nightly', enabled: true, schedule: '02:00', vmids: 'all', exclude: [] }], ...over,
});
const instance = (over: Partial<InstanceFacts> = {}): InstanceFacts => ({
  vmid: 100, tailscale: 1, tailscale_ip: '100.64.0.5', patchmon: 1, semaphore: 1, guest_status: 'running', host: host(),
  backup: { newest: now / 1000 - 5 * 3600, newest_verified: 'ok', newest_good: now / 1000 - 5 * 3600 }, ...over,
});
const fleet = (over: Partial<FleetFacts> = {}): FleetFacts => ({ tailscale: now - H, patchmon: now - H, semaphore: now - H, anyBackupReport: true, ...over });
const one = (check: string, i: InstanceFacts, f = fleet(), value: true | number = true) => {
  const c = checkInstance(i, { [check]: value }, f, now)[check as 'running']!;
  return `${c.result}: ${c.reason}`;
};
const offline = host({ online: false, last_heartbeat_at: now - 2 * H });

describe('each check: pass, fail, unknown, with its reason', () => {
  it('running: the guest status of its host’s last heartbeat', () => {
    expect(one('running', instance())).toBe('pass: running');
    expect(one('running', instance({ guest_status: 'stopped' }))).toBe('fail: guest is stopped');
    expect(one('running', instance({ host: null, guest_status: null }))).toBe('unknown: no agent reports this guest');
    expect(one('running', instance({ host: offline }))).toBe('unknown: no heartbeat from its host for 2 h');
    expect(one('running', instance({ host: host({ online: false, last_heartbeat_at: null }) }))).toBe('unknown: its host has never sent a heartbeat');
  });

  it('on_tailnet, patched, in_automation: the flags their sync jobs set, unknown until the job has succeeded', () => {
    expect(one('on_tailnet', instance())).toBe('pass: on the tailnet as 100.64.0.5');
    expect(one('on_tailnet', instance({ tailscale: 0, tailscale_ip: '' }))).toBe('fail: not on the tailnet');
    expect(one('on_tailnet', instance(), fleet({ tailscale: null }))).toBe('unknown: the Tailscale sync has never succeeded');
    expect(one('patched', instance())).toBe('pass: reports to PatchMon');
    expect(one('patched', instance({ patchmon: 0 }))).toBe('fail: not reporting to PatchMon');
    expect(one('patched', instance(), fleet({ patchmon: null }))).toBe('unknown: the PatchMon sync has never succeeded');
    expect(one('in_automation', instance())).toBe('pass: in the Semaphore inventory');
    expect(one('in_automation', instance({ semaphore: 0 }))).toBe('fail: not in the Semaphore inventory');
    expect(one('in_automation', instance(), fleet({ semaphore: null }))).toBe('unknown: the Semaphore sync has never succeeded');
  });

  it('in_backup_job: enabled jobs only, "all" less its exclusions', () => {
    const jobs = (...list: Partial<HostFacts['jobs'][number]>[]) => host({ jobs: list.map((j, n) => ({ host_id: 1, id: `job${n}`, enabled: true, schedule: '02:00', vmids: 'all' as const, exclude: [], ...j })) });
    expect(one('in_backup_job', instance())).toBe('pass: in backup job backup-nightly (02:00)');
    expect(one('in_backup_job', instance({ host: jobs({ vmids: [101, 100], schedule: 'sat 03:00' }) }))).toBe('pass: in backup job job0 (sat 03:00)');
    expect(one('in_backup_job', instance({ host: jobs({ vmids: [101] }) }))).toBe('fail: not in any enabled backup job');
    expect(one('in_backup_job', instance({ host: jobs({ enabled: false }) }))).toBe('fail: not in any enabled backup job (backup job job0 is disabled)');
    expect(one('in_backup_job', instance({ host: jobs({ exclude: [100] }) }))).toBe('fail: not in any enabled backup job (excluded from backup job job0)');
    expect(one('in_backup_job', instance({ host: jobs({ exclude: [100] }, { vmids: [100], id: 'mine' }) }))).toBe('pass: in backup job mine (02:00)');
    expect(one('in_backup_job', instance({ host: host({ backups_reported_at: null, jobs: [] }) }))).toBe('unknown: its host has not reported its backup jobs');
    expect(one('in_backup_job', instance({ host: offline }))).toBe('unknown: no heartbeat from its host for 2 h');
    expect(one('in_backup_job', instance({ host: null }))).toBe('unknown: no agent reports this guest');
  });

  it('backed_up_within_h: the newest backup that did not fail verification', () => {
    const at = (hours: number) => now / 1000 - hours * 3600;
    expect(one('backed_up_within_h', instance(), fleet(), 26)).toBe('pass: last backup 5 h ago');
    expect(one('backed_up_within_h', instance({ backup: { newest: at(72), newest_verified: null, newest_good: at(72) } }), fleet(), 26)).toBe('fail: last backup 3 days ago');
    expect(one('backed_up_within_h', instance({ backup: { newest: at(1), newest_verified: 'failed', newest_good: at(30) } }), fleet(), 26)).toBe(
      'fail: last backup 30 h ago (a newer one failed verification)',
    );
    expect(one('backed_up_within_h', instance({ backup: { newest: at(1), newest_verified: 'failed', newest_good: null } }), fleet(), 26)).toBe(
      'fail: no backup that passed verification (the newest failed it)',
    );
    expect(one('backed_up_within_h', instance({ backup: undefined }), fleet(), 26)).toBe('fail: no backup found');
    expect(one('backed_up_within_h', instance(), fleet({ anyBackupReport: false }), 26)).toBe('unknown: no agent has reported backups yet');
    expect(one('backed_up_within_h', instance({ host: offline }), fleet(), 26)).toBe('unknown: no heartbeat from its host for 2 h');
    // A guest no agent lists may still have backups on a storage an agent reported.
    expect(one('backed_up_within_h', instance({ host: null }), fleet(), 26)).toBe('pass: last backup 5 h ago');
  });

  it('agent_current: the host’s agent against what its channel offers it; a pinned host is current on its pin', () => {
    expect(one('agent_current', instance())).toBe('pass: its host runs agent 1.0.0, the newest on its stable channel');
    expect(one('agent_current', instance({ host: host({ offered: '1.1.0' }) }))).toBe('fail: its host runs agent 1.0.0; 1.1.0 is offered on its stable channel');
    expect(one('agent_current', instance({ host: host({ agent_channel: 'beta', offered: '1.2.0-beta.1' }) }))).toBe(
      'fail: its host runs agent 1.0.0; 1.2.0-beta.1 is offered on its beta channel',
    );
    expect(one('agent_current', instance({ host: host({ agent_pin: '1.0.0' }) }))).toBe('pass: its host runs agent 1.0.0, the version it is pinned to');
    expect(one('agent_current', instance({ host: offline }))).toBe('unknown: no heartbeat from its host for 2 h');
    expect(one('agent_current', instance({ host: null }))).toBe('unknown: no agent reports this guest');
  });
});

describe('policies together', () => {
  it('an instance in several scopes is held to every check of each, and to the fewest hours', () => {
    expect(mergeChecks([])).toBeUndefined();
    expect(mergeChecks([{ running: true, backed_up_within_h: 26 }, { patched: true, backed_up_within_h: 12 }, { backed_up_within_h: 48 }])).toEqual({ running: true, patched: true, backed_up_within_h: 12 });
  });

  it('durations in words', () => {
    expect([duration(45_000), duration(20 * 60_000), duration(5 * H), duration(72 * H), duration(-5)]).toEqual(['45 s', '20 min', '5 h', '3 days', '0 s']);
  });
});
