import { describe, expect, it } from 'vitest';
import type { HostRow } from '../hosts/repo.js';
import { offeredUpgrade, requestedUpgrade, settledUpgrade, timedOutUpgrade, UPGRADE_TIMEOUT_MS, upgradeView } from './upgrades.js';

const T = Date.parse('2026-11-22T10:00:00.000Z');

function buildHost(overrides: Partial<HostRow> = {}): HostRow {
  return {
    id: 1,
    machine_id: 'm-1',
    hostname: 'pve1',
    state: 'active',
    enrolled_at: T - 60_000,
    enrollment_token_id: 1,
    agent_version: '1.0.0',
    agent_started_at: T - 30_000,
    last_heartbeat_at: T,
    heartbeat_interval_s: 30,
    addresses: '[]',
    uptime_s: null,
    hypervisor_version: '',
    guests_hash: '',
    sync_registry: 0,
    allow_rebind: 0,
    allows_scripts: 0,
    deleted_at: null,
    agent_channel: 'stable',
    agent_pin: null,
    collect_metrics: 1,
    collect_configs: 1,
    collect_storage: 1,
    collect_backups: 1,
    upgrade_state: null,
    upgrade_version: null,
    upgrade_from: null,
    upgrade_requested_at: null,
    upgrade_started_at: null,
    upgrade_finished_at: null,
    ...overrides,
  };
}

/** Asked for at T, offered at T + 1 s. */
const inProgress = (overrides: Partial<HostRow> = {}) =>
  buildHost({ upgrade_state: 'in_progress', upgrade_version: '1.1.0', upgrade_from: '1.0.0', upgrade_requested_at: T, upgrade_started_at: T + 1000, ...overrides });

describe('requestedUpgrade', () => {
  it('is pending from the version the agent runs', () => {
    expect(requestedUpgrade(buildHost(), '1.1.0', false, T)).toEqual({ state: 'pending', version: '1.1.0', from: '1.0.0', requestedAt: T, startedAt: null, finishedAt: null });
  });

  it('refuses a host being removed, the running version, and an older one without rollback', () => {
    expect(() => requestedUpgrade(buildHost({ state: 'deleting' }), '1.1.0', false, T)).toThrow('host is being deleted');
    expect(() => requestedUpgrade(buildHost(), '1.0.0', false, T)).toThrow('host already runs that version');
    expect(() => requestedUpgrade(buildHost({ agent_version: '1.1.0' }), '1.0.0', false, T)).toThrow('send "rollback": true to roll back');
    expect(requestedUpgrade(buildHost({ agent_version: '1.1.0' }), '1.0.0', true, T)).toMatchObject({ state: 'pending', version: '1.0.0', from: '1.1.0' });
  });
});

describe('offeredUpgrade', () => {
  it('begins a pending upgrade when offered, from the version the agent reports then', () => {
    const host = buildHost({ agent_version: '1.0.1', upgrade_state: 'pending', upgrade_version: '1.1.0', upgrade_from: '1.0.0', upgrade_requested_at: T });
    expect(offeredUpgrade(host, T + 1000)).toEqual({
      record: { state: 'in_progress', version: '1.1.0', from: '1.0.1', requestedAt: T, startedAt: T + 1000, finishedAt: null },
      version: '1.1.0',
      rollback: false,
    });
  });

  it('says rollback for a version older than the one it was asked from', () => {
    const host = buildHost({ agent_version: '1.1.0', upgrade_state: 'pending', upgrade_version: '1.0.0', upgrade_from: '1.1.0', upgrade_requested_at: T });
    expect(offeredUpgrade(host, T)?.rollback).toBe(true);
  });

  it('offers nothing that is not pending: an upgrade goes out once', () => {
    expect(offeredUpgrade(buildHost(), T)).toBeUndefined();
    expect(offeredUpgrade(inProgress(), T + 2000)).toBeUndefined();
  });
});

describe('settledUpgrade', () => {
  it('stays open while the old process beats, or one claiming the new version started before the upgrade began', () => {
    expect(settledUpgrade(inProgress(), T + 5000)).toBeUndefined();
    expect(settledUpgrade(inProgress({ agent_version: '1.1.0', agent_started_at: T + 1000 }), T + 5000)).toBeUndefined();
  });

  it('succeeds on a heartbeat of the new version from a process started after the upgrade began', () => {
    expect(settledUpgrade(inProgress({ agent_version: '1.1.0', agent_started_at: T + 1001 }), T + 5000)).toEqual({
      state: 'succeeded',
      version: '1.1.0',
      from: '1.0.0',
      requestedAt: T,
      startedAt: T + 1000,
      finishedAt: T + 5000,
    });
  });

  it('fails on any heartbeat after the timeout, at the moment it timed out, even one of the new version', () => {
    const late = T + 1000 + UPGRADE_TIMEOUT_MS + 1;
    expect(settledUpgrade(inProgress(), late)).toMatchObject({ state: 'failed', finishedAt: T + 1000 + UPGRADE_TIMEOUT_MS });
    expect(settledUpgrade(inProgress({ agent_version: '1.1.0', agent_started_at: late - 10 }), late)).toMatchObject({ state: 'failed' });
  });
});

describe('timedOutUpgrade and upgradeView', () => {
  it('writes an upgrade in progress down as failed when it timed out', () => {
    expect(timedOutUpgrade(inProgress())).toMatchObject({ state: 'failed', finishedAt: T + 1000 + UPGRADE_TIMEOUT_MS });
    expect(timedOutUpgrade(buildHost())).toBeUndefined();
  });

  it('shows an upgrade past the timeout failed before anything writes it', () => {
    expect(upgradeView(inProgress(), T + 1000 + UPGRADE_TIMEOUT_MS)).toMatchObject({ state: 'in_progress', finished_at: null });
    expect(upgradeView(inProgress(), T + 1001 + UPGRADE_TIMEOUT_MS)).toEqual({
      state: 'failed',
      version: '1.1.0',
      from: '1.0.0',
      requested_at: '2026-11-22T10:00:00.000Z',
      started_at: '2026-11-22T10:00:01.000Z',
      finished_at: '2026-11-22T10:05:01.000Z',
    });
    expect(upgradeView(buildHost(), T)).toBeNull();
  });
});
