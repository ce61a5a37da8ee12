import { conflict } from '../errors.js';
import { isoMillis } from '../time.js';
import { compareVersions } from '../contract/versions.js';
import type { HostSummary, UpgradeState } from '../contract/hosts.js';

/**
 * An agent upgrade's states (PRODUCT.md): `pending` once asked for, `in_progress` once offered in a
 * heartbeat answer, then `succeeded` when "a fresh heartbeat authenticated with the host token reports
 * the new version with a `started_at` after the upgrade began", or `failed` when "no such heartbeat
 * within 5 minutes". Plain functions of the host's row: they say what the row becomes, the caller writes it.
 */

/** A host's upgrade columns, written together (server/hosts/repo.ts stores them, these functions say how they move). */
export interface UpgradeRecord {
  state: UpgradeState | null;
  version: string | null;
  from: string | null;
  requestedAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
}

/** What an upgrade reads of a host's row (server/hosts/repo.ts's HostRow). */
export interface UpgradingHost {
  state: string;
  agent_version: string;
  agent_started_at: number | null;
  upgrade_state: UpgradeState | null;
  upgrade_version: string | null;
  upgrade_from: string | null;
  upgrade_requested_at: number | null;
  upgrade_started_at: number | null;
  upgrade_finished_at: number | null;
}

export const UPGRADE_TIMEOUT_MS = 5 * 60 * 1000;

/** An administrator asks for `version`; an older one than the agent runs only with `rollback`. */
export function requestedUpgrade(host: UpgradingHost, version: string, rollback: boolean, now: number): UpgradeRecord {
  if (host.state !== 'active') throw conflict('host is being deleted');
  if (host.agent_version === version) throw conflict('host already runs that version');
  if (compareVersions(version, host.agent_version) < 0 && !rollback) {
    throw conflict(`${version} is older than the agent's ${host.agent_version}: send "rollback": true to roll back`);
  }
  return { state: 'pending', version, from: host.agent_version, requestedAt: now, startedAt: null, finishedAt: null };
}

/**
 * A pending upgrade is offered to the agent once; it begins then, from the version the agent runs.
 * `rollback`: the version is older than the one the upgrade was asked from, which only a request with
 * `rollback: true` gets past, and the agent needs to be told.
 */
export function offeredUpgrade(host: UpgradingHost, now: number): { record: UpgradeRecord; version: string; rollback: boolean } | undefined {
  if (host.upgrade_state !== 'pending' || !host.upgrade_version) return undefined;
  const version = host.upgrade_version;
  return {
    record: { state: 'in_progress', version, from: host.agent_version, requestedAt: host.upgrade_requested_at, startedAt: now, finishedAt: null },
    version,
    rollback: host.upgrade_from !== null && compareVersions(version, host.upgrade_from) < 0,
  };
}

/**
 * What a heartbeat (already written into `host`) says of an upgrade in progress: only the new process
 * counts (the new version, started after the upgrade began), and only within the timeout; a late
 * heartbeat settles it as failed. Undefined while it is still open.
 */
export function settledUpgrade(host: UpgradingHost, now: number): UpgradeRecord | undefined {
  if (host.upgrade_state !== 'in_progress' || !host.upgrade_version || host.upgrade_started_at === null) return undefined;
  const late = now - host.upgrade_started_at > UPGRADE_TIMEOUT_MS;
  const fresh = host.agent_version === host.upgrade_version && host.agent_started_at !== null && host.agent_started_at > host.upgrade_started_at;
  if (!late && !fresh) return undefined;
  return {
    ...recordOf(host),
    state: fresh && !late ? 'succeeded' : 'failed',
    finishedAt: late ? host.upgrade_started_at + UPGRADE_TIMEOUT_MS : now,
  };
}

/** An upgrade in progress past the timeout, written down as failed at the moment it timed out. */
export function timedOutUpgrade(host: UpgradingHost): UpgradeRecord | undefined {
  if (host.upgrade_state !== 'in_progress' || host.upgrade_started_at === null) return undefined;
  return { ...recordOf(host), state: 'failed', finishedAt: host.upgrade_started_at + UPGRADE_TIMEOUT_MS };
}

/** The upgrade as the API shows it: one in progress past the timeout is shown failed before anything writes it. */
export function upgradeView(host: UpgradingHost, now: number): HostSummary['upgrade'] {
  if (!host.upgrade_state || !host.upgrade_version || host.upgrade_requested_at === null) return null;
  const timedOut = host.upgrade_state === 'in_progress' && host.upgrade_started_at !== null && now - host.upgrade_started_at > UPGRADE_TIMEOUT_MS;
  return {
    state: timedOut ? 'failed' : host.upgrade_state,
    version: host.upgrade_version,
    from: host.upgrade_from,
    requested_at: isoMillis(host.upgrade_requested_at),
    started_at: host.upgrade_started_at === null ? null : isoMillis(host.upgrade_started_at),
    finished_at: timedOut ? isoMillis(host.upgrade_started_at! + UPGRADE_TIMEOUT_MS) : host.upgrade_finished_at === null ? null : isoMillis(host.upgrade_finished_at),
  };
}

const recordOf = (host: UpgradingHost): UpgradeRecord => ({
  state: host.upgrade_state,
  version: host.upgrade_version,
  from: host.upgrade_from,
  requestedAt: host.upgrade_requested_at,
  startedAt: host.upgrade_started_at,
  finishedAt: host.upgrade_finished_at,
});
