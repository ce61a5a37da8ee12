import type { Deletion, EnrollmentToken, EnrollmentTokenState, HostBrief, HostDetail, HostEvent, HostStatus, HostSummary } from '../contract/hosts.js';
import { notFound } from '../errors.js';
import { isoMillis, type Clock } from '../time.js';
import { driftCounts, hostDrift } from './drift.js';
import { offeredVersion } from '../releases/channels.js';
import type { Releases } from '../releases/releases.js';
import { collectorsOf, type DeletionRow, type EnrollmentTokenRow, type HostRepo, type HostRow, type InstancesOf } from './repo.js';
import { upgradeView } from '../releases/upgrades.js';

/** A host is online while a heartbeat came within this many intervals. */
export const ONLINE_INTERVALS = 3;

const iso = (ms: number | null) => (ms === null ? null : isoMillis(ms));

export function enrollmentState(row: EnrollmentTokenRow, now: number): EnrollmentTokenState {
  if (row.revoked_at !== null) return 'revoked';
  if (row.uses >= row.max_uses) return 'used_up';
  if (now >= row.expires_at) return 'expired';
  return 'active';
}

export function presentDeletion(row: DeletionRow | undefined): Deletion | null {
  if (!row) return null;
  return {
    operation_id: row.id,
    status: row.status,
    created_by: row.created_by,
    created_at: isoMillis(row.created_at),
    delivered_at: iso(row.delivered_at),
    confirmed_at: iso(row.confirmed_at),
    receipt_expires_at: iso(row.receipt_expires_at),
  };
}

const presentEnrollmentToken = (row: EnrollmentTokenRow, now: number): EnrollmentToken => ({
  id: row.id,
  name: row.name,
  created_by: row.created_by,
  created_at: isoMillis(row.created_at),
  expires_at: isoMillis(row.expires_at),
  max_uses: row.max_uses,
  uses: row.uses,
  revoked_at: iso(row.revoked_at),
  state: enrollmentState(row, now),
  host_id: row.host_id,
});

export type HostView = ReturnType<typeof createHostView>;

/** What the API and the live stream show of hosts: the rows, their status, drift counts and removal. */
export function createHostView(repo: HostRepo, releases: Releases, clock: Clock, intervalS: number, instancesOf: InstancesOf) {
  /** The oldest last heartbeat (ms) of a host that is online at `now`. */
  const freshSince = (now = clock.now()) => now - ONLINE_INTERVALS * intervalS * 1000;

  function statusOf(host: HostRow, now = clock.now()): HostStatus {
    if (host.state === 'deleted') return 'deleted';
    if (host.state === 'deleting') return 'deleting';
    const online = host.last_heartbeat_at !== null && host.last_heartbeat_at >= freshSince(now);
    return online ? 'online' : 'offline';
  }

  /** What every host row shows that is not in the row: counted once per list, not per host. */
  const contextOf = (now: number) => {
    const newest = { stable: releases.newest('stable'), beta: releases.newest('beta') };
    return { rebindable: repo.rebindableHosts(now), newest: (channel: keyof typeof newest) => newest[channel] };
  };

  function summary(host: HostRow, counts: { guests: number; drift: number }, now = clock.now(), context = contextOf(now)): HostSummary {
    return { ...brief(host, now, context), guest_count: counts.guests, drift_count: counts.drift };
  }

  function brief(host: HostRow, now: number, context: ReturnType<typeof contextOf>): HostBrief {
    const upgradeTo = host.state === 'active' ? (offeredVersion(host, context.newest) ?? null) : null;
    return {
      id: host.id,
      hostname: host.hostname,
      machine_id: host.machine_id,
      status: statusOf(host, now),
      enrolled_at: isoMillis(host.enrolled_at),
      last_heartbeat_at: iso(host.last_heartbeat_at),
      agent_version: host.agent_version,
      agent_started_at: iso(host.agent_started_at),
      heartbeat_interval_s: intervalS,
      addresses: JSON.parse(host.addresses) as string[],
      uptime_s: host.uptime_s,
      hypervisor_version: host.hypervisor_version,
      sync_registry: host.sync_registry === 1,
      allows_scripts: host.allows_scripts === 1,
      allow_rebind: context.rebindable.has(host.id),
      agent_channel: host.agent_channel,
      agent_pin: host.agent_pin,
      collectors: collectorsOf(host),
      upgrade_available: upgradeTo !== null,
      upgrade_to: upgradeTo,
      deleted_at: iso(host.deleted_at),
      upgrade: upgradeView(host, now),
    };
  }

  return {
    intervalS,
    statusOf,
    freshSince,

    /** What the stream sends for host.heartbeat and host.status: cheap to build on every heartbeat. */
    eventOf: (host: HostRow): HostEvent => ({
      id: host.id,
      hostname: host.hostname,
      status: statusOf(host),
      last_heartbeat_at: iso(host.last_heartbeat_at),
      agent_version: host.agent_version,
    }),

    list(): HostSummary[] {
      const now = clock.now();
      const context = contextOf(now);
      const counts = driftCounts(repo.guestFacts(freshSince(now)), instancesOf);
      return repo.listHosts().map((host) => {
        const c = counts.get(host.id);
        const drift = host.state === 'deleted' ? 0 : (c?.drift ?? 0);
        return summary(host, { guests: c?.guests ?? 0, drift }, now, context);
      });
    },

    /**
     * Every host as the list shows it, without its guest and drift counts: for readers that never
     * show them. The alert rules read this every few seconds (each heartbeat interval, at most 5 s),
     * and counting the drift of a 10,000-guest host reads all its guests and the registry each time.
     */
    briefs(): HostBrief[] {
      const now = clock.now();
      const context = contextOf(now);
      return repo.listHosts().map((host) => brief(host, now, context));
    },

    get(id: number): HostDetail {
      const host = repo.hostById(id);
      if (!host) throw notFound('host not found');
      const now = clock.now();
      const guests = repo.guestsOf(id);
      const drift = hostDrift(repo, host, guests, freshSince(now), instancesOf);
      return { ...summary(host, { guests: guests.length, drift: drift.length }, now), guests, drift, deletion: presentDeletion(repo.latestDeletionOf(id)) };
    },

    listEnrollmentTokens() {
      const now = clock.now();
      return repo.listEnrollmentTokens().map((row) => presentEnrollmentToken(row, now));
    },
  };
}
