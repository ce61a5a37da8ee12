import { nameOf, type AuditChange } from '../audit.js';
import type { MaintenancePolicyInput, MaintenanceWindow } from '../contract/inputs/operations.js';
import type { MaintenancePolicy } from '../contract/operations.js';
import type { Db } from '../db/database.js';
import { conflict } from '../errors.js';
import { isoMillis } from '../time.js';
import { serverTimeZone, windowOpen } from './maintenance-windows.js';
import { requireHost, type Who } from '../hosts/parts.js';
import type { OperationParts } from './parts.js';

interface MaintenanceRow {
  host_id: number;
  windows: string;
  timezone: string;
  auto_upgrade: 0 | 1;
  muted: 0 | 1;
  updated_by: string | null;
  updated_at: number;
}

export type MaintenanceRepo = ReturnType<typeof createMaintenanceRepo>;

/** One row per host in host_maintenance; none means no windows, no auto-upgrade, not muted. */
export function createMaintenanceRepo(db: Db) {
  const byHost = db.prepare<[number], MaintenanceRow>('SELECT * FROM host_maintenance WHERE host_id = ?');
  const muted = db.prepare<[number], number>('SELECT muted FROM host_maintenance WHERE host_id = ?').pluck();
  const autoUpgrading = db.prepare<[], MaintenanceRow>('SELECT * FROM host_maintenance WHERE auto_upgrade = 1');
  const upsert = db.prepare<[number, string, string, number, number, string | null, number]>(
    `INSERT INTO host_maintenance (host_id, windows, timezone, auto_upgrade, muted, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (host_id) DO UPDATE SET windows = excluded.windows, timezone = excluded.timezone, auto_upgrade = excluded.auto_upgrade,
       muted = excluded.muted, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  );
  return {
    byHost: (hostId: number) => byHost.get(hostId),
    /** "muted keeps the host's alerts from notifying (they are still recorded)". */
    isMuted: (hostId: number) => muted.get(hostId) === 1,
    autoUpgrading: () => autoUpgrading.all(),
    put: (hostId: number, p: MaintenancePolicyInput, by: string | null, now: number) =>
      void upsert.run(hostId, JSON.stringify(p.windows), p.timezone, Number(p.auto_upgrade), Number(p.muted), by, now),
  };
}

const policyOf = (row: MaintenanceRow | undefined): MaintenancePolicyInput => ({
  windows: row ? (JSON.parse(row.windows) as MaintenanceWindow[]) : [],
  timezone: row?.timezone ?? serverTimeZone(),
  auto_upgrade: row?.auto_upgrade === 1,
  muted: row?.muted === 1,
});

/** Whether the row's windows are open at `now`: false without windows. */
export const rowWindowOpen = (row: Pick<MaintenanceRow, 'windows' | 'timezone'>, now: number): boolean =>
  windowOpen(JSON.parse(row.windows) as MaintenanceWindow[], row.timezone, now);

export type Maintenance = ReturnType<typeof createMaintenance>;

/**
 * Maintenance policies (PRODUCT.md): windows per host in which disruptive guest actions may run
 * (outside them an administrator must force one), upgrades by themselves inside a window
 * (`auto_upgrade`), and `muted` for alerts.
 */
export function createMaintenance(parts: OperationParts, repo: MaintenanceRepo) {
  const { ctx, audit } = parts;

  function get(hostId: number): MaintenancePolicy {
    requireHost(parts.repo, hostId);
    const row = repo.byHost(hostId);
    const policy = policyOf(row);
    return {
      ...policy,
      window_open: windowOpen(policy.windows, policy.timezone, ctx.clock.now()),
      updated_by: row?.updated_by ?? null,
      updated_at: row ? isoMillis(row.updated_at) : null,
    };
  }

  const putTx = ctx.transaction((hostId: number, input: MaintenancePolicyInput, who: Who, now: number) => {
    const host = requireHost(parts.repo, hostId);
    if (host.state === 'deleted') throw conflict('host is deleted');
    const before = policyOf(repo.byHost(hostId));
    repo.put(hostId, input, who.actor, now);
    const changes: AuditChange[] = (['windows', 'timezone', 'auto_upgrade', 'muted'] as const)
      .filter((field) => JSON.stringify(before[field]) !== JSON.stringify(input[field]))
      .map((field) => ({ field, before: before[field], after: input[field] }));
    audit.write({
      action: 'host.maintenance',
      subject: { type: 'host', id: String(hostId), name: host.hostname },
      summary: `${nameOf()} ${changes.length ? `changed the maintenance policy of host ${host.hostname}: ${changes.map((c) => c.field).join(', ')}` : `saved the maintenance policy of host ${host.hostname} without changes`}`,
      changes,
      detail: { host: host.hostname },
    });
  });

  return {
    get,
    put(hostId: number, input: MaintenancePolicyInput, who: Who): MaintenancePolicy {
      putTx(hostId, input, who, ctx.clock.now());
      return get(hostId);
    },
    /** Disruptive actions wait for a window: true when the host has windows and none is open at `now`. */
    closed(hostId: number, now: number): boolean {
      const row = repo.byHost(hostId);
      return !!row && row.windows !== '[]' && !rowWindowOpen(row, now);
    },
    isMuted: repo.isMuted,
  };
}
