import type { Db } from '../db/database.js';
import type { Guest, UpgradeState } from '../contract/hosts.js';
import type { UpgradeRecord } from '../releases/upgrades.js';

export interface EnrollmentTokenRow {
  id: number;
  name: string;
  token_hash: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  max_uses: number;
  uses: number;
  revoked_at: number | null;
  /** Set on a re-bind token: the host whose machine id it may enroll again. */
  host_id: number | null;
}

export interface HostRow {
  id: number;
  machine_id: string;
  hostname: string;
  state: 'active' | 'deleting' | 'deleted';
  enrolled_at: number;
  enrollment_token_id: number | null;
  agent_version: string;
  agent_started_at: number | null;
  last_heartbeat_at: number | null;
  heartbeat_interval_s: number;
  addresses: string;
  uptime_s: number | null;
  hypervisor_version: string;
  guests_hash: string;
  sync_registry: 0 | 1;
  allow_rebind: 0 | 1;
  deleted_at: number | null;
  /** The host's latest upgrade that was not cancelled, read from its operation (server/operations/commands/upgrade.ts). */
  upgrade_state: UpgradeState | null;
  upgrade_version: string | null;
  upgrade_from: string | null;
  upgrade_requested_at: number | null;
  upgrade_started_at: number | null;
  upgrade_finished_at: number | null;
}

export interface DeletionRow {
  id: string;
  host_id: number;
  status: 'pending' | 'delivered' | 'confirmed' | 'forced' | 'expired';
  created_by: string | null;
  created_at: number;
  receipt_hash: string | null;
  receipt_expires_at: number | null;
  delivered_at: number | null;
  confirmed_at: number | null;
}

export interface FactsUpdate {
  id: number;
  hostname: string;
  agent_version: string;
  agent_started_at: number;
  last_heartbeat_at: number;
  addresses: string;
  uptime_s: number | null;
  hypervisor_version: string;
}

/** What drift needs of a registered instance. */
export interface InstanceRef {
  vmid: number;
  name: string;
  stack: 'production' | 'development';
}

/** The registered instances among these vmids: the registry's answer (hosts own no instance SQL). */
export type InstancesOf = (vmids: readonly number[]) => readonly InstanceRef[];

/** A guest as the host list counts it. */
export interface GuestFact {
  host_id: number;
  vmid: number;
  name: string;
  template: 0 | 1;
  shared: 0 | 1;
}

export type HostRepo = ReturnType<typeof createHostRepo>;

/** A guest as stored: SQLite has no booleans. */
type GuestRow = Omit<Guest, 'template'> & { template: 0 | 1 };
const GUEST_COLUMNS = 'vmid, name, type, status, config_sha256, template, lock';

/** A guest as the API shows it: `config_sha256` only when the agent reported one. */
const presentGuest = ({ config_sha256, template, ...guest }: GuestRow): Guest => ({ ...guest, template: template === 1, ...(config_sha256 ? { config_sha256 } : {}) });

/**
 * A host with its current upgrade: upgrades are operations (server/db/migrations/0010), and the host
 * page shows the latest one not cancelled. `sent` is an upgrade in progress.
 */
const HOST = `SELECT h.*,
    CASE u.status WHEN 'sent' THEN 'in_progress' WHEN 'expired' THEN 'failed' ELSE u.status END AS upgrade_state,
    json_extract(u.params, '$.version') AS upgrade_version, json_extract(u.params, '$.from') AS upgrade_from,
    u.requested_at AS upgrade_requested_at, u.sent_at AS upgrade_started_at, u.finished_at AS upgrade_finished_at
  FROM hosts h LEFT JOIN operations u ON u.id = (
    SELECT id FROM operations WHERE host_id = h.id AND type = 'upgrade' AND status != 'cancelled' ORDER BY requested_at DESC, rowid DESC LIMIT 1)`;
/** The latest upgrade of a host that was not cancelled: the one its row shows. */
const CURRENT_UPGRADE = "SELECT id FROM operations WHERE host_id = ? AND type = 'upgrade' AND status != 'cancelled' ORDER BY requested_at DESC, rowid DESC LIMIT 1";
/** A host removal as the hosts API has always shown it, read from its operation. */
const DELETION = `SELECT id, host_id,
    CASE status WHEN 'sent' THEN 'delivered' WHEN 'succeeded' THEN 'confirmed' WHEN 'cancelled' THEN 'forced' ELSE status END AS status,
    requested_by AS created_by, requested_at AS created_at, receipt_hash, receipt_expires_at, sent_at AS delivered_at, finished_at AS confirmed_at
  FROM operations`;

/** SQL of hosts and agents; every statement prepared once. */
export function createHostRepo(db: Db) {
  const s = {
    insertEnrollment: db.prepare<[string, string, string | null, number, number, number, number | null]>(
      'INSERT INTO enrollment_tokens (name, token_hash, created_by, created_at, expires_at, max_uses, host_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    // Hosts that an administrator allowed to be re-bound: an unused, unexpired, unrevoked re-bind token exists.
    rebindable: db.prepare<[number], number>(
      'SELECT DISTINCT host_id FROM enrollment_tokens WHERE host_id IS NOT NULL AND revoked_at IS NULL AND uses < max_uses AND expires_at > ?',
    ).pluck(),
    enrollmentById: db.prepare<[number], EnrollmentTokenRow>('SELECT * FROM enrollment_tokens WHERE id = ?'),
    enrollmentByHash: db.prepare<[string], EnrollmentTokenRow>('SELECT * FROM enrollment_tokens WHERE token_hash = ?'),
    listEnrollment: db.prepare<[], EnrollmentTokenRow>('SELECT * FROM enrollment_tokens ORDER BY id DESC'),
    revokeEnrollment: db.prepare<[number, number]>('UPDATE enrollment_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    // Takes one use only while the token still holds: the slot is taken by this UPDATE, not by an earlier read.
    useEnrollment: db.prepare<[number, number]>(
      'UPDATE enrollment_tokens SET uses = uses + 1 WHERE id = ? AND revoked_at IS NULL AND uses < max_uses AND expires_at > ?',
    ),

    hostById: db.prepare<[number], HostRow>(`${HOST} WHERE h.id = ?`),
    liveHostByMachine: db.prepare<[string], HostRow>(`${HOST} WHERE h.machine_id = ? AND h.state != 'deleted'`),
    listHosts: db.prepare<[], HostRow>(`${HOST} ORDER BY h.hostname COLLATE NOCASE, h.id`),
    insertHost: db.prepare<[string, string, number, number, string, number]>(
      `INSERT INTO hosts (machine_id, hostname, enrolled_at, enrollment_token_id, agent_version, heartbeat_interval_s)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    rebindHost: db.prepare<[string, string, number, number]>(
      'UPDATE hosts SET hostname = ?, agent_version = ?, enrollment_token_id = ?, allow_rebind = 0 WHERE id = ?',
    ),
    // A re-bound host starts without the upgrade it was in: the new agent is whatever was installed.
    cancelUpgrades: db.prepare<[number, number]>(
      "UPDATE operations SET status = 'cancelled', finished_at = ? WHERE host_id = ? AND type = 'upgrade' AND status IN ('pending', 'sent')",
    ),
    updateFacts: db.prepare<FactsUpdate>(
      `UPDATE hosts SET hostname = @hostname, agent_version = @agent_version, agent_started_at = @agent_started_at,
         last_heartbeat_at = @last_heartbeat_at, addresses = @addresses, uptime_s = @uptime_s,
         hypervisor_version = @hypervisor_version
       WHERE id = @id`,
    ),
    wentOffline: db.prepare<[number, number], HostRow>(
      `${HOST} WHERE h.state = 'active' AND h.last_heartbeat_at > ? AND h.last_heartbeat_at <= ?`,
    ),
    upgradesTimedOut: db.prepare<[number], HostRow>(`${HOST} WHERE u.status = 'sent' AND u.sent_at < ?`),
    setGuestsHash: db.prepare<[string, number]>('UPDATE hosts SET guests_hash = ? WHERE id = ?'),
    setSettings: db.prepare<[number | null, number | null, number]>(
      'UPDATE hosts SET sync_registry = coalesce(?, sync_registry), allow_rebind = coalesce(?, allow_rebind) WHERE id = ?',
    ),
    setState: db.prepare<[string, number | null, number]>('UPDATE hosts SET state = ?, deleted_at = ? WHERE id = ?'),
    insertUpgrade: db.prepare<[string, number, string, string | null, number]>(
      "INSERT INTO operations (id, host_id, type, params, status, requested_by, requested_at) VALUES (?, ?, 'upgrade', ?, 'pending', ?, ?)",
    ),
    setUpgrade: db.prepare<[string, string | null, number | null, number | null, number]>(
      `UPDATE operations SET status = ?, params = json_set(params, '$.from', ?), sent_at = ?, finished_at = ?
        WHERE id = (${CURRENT_UPGRADE})`,
    ),
    currentUpgradeId: db.prepare<[number], string>(CURRENT_UPGRADE).pluck(),

    insertHostToken: db.prepare<[number, string, number]>('INSERT INTO host_tokens (host_id, token_hash, created_at) VALUES (?, ?, ?)'),
    hostTokenByHash: db.prepare<[string], { id: number; host_id: number; token_hash: string; revoked_at: number | null }>(
      'SELECT id, host_id, token_hash, revoked_at FROM host_tokens WHERE token_hash = ?',
    ),
    revokeHostTokens: db.prepare<[number, number]>('UPDATE host_tokens SET revoked_at = ? WHERE host_id = ? AND revoked_at IS NULL'),

    guestsOf: db.prepare<[number], GuestRow>(`SELECT ${GUEST_COLUMNS} FROM host_guests WHERE host_id = ? ORDER BY vmid`),
    guestOf: db.prepare<[number, number], GuestRow>(`SELECT ${GUEST_COLUMNS} FROM host_guests WHERE host_id = ? AND vmid = ?`),
    // Proxmox vmids are cluster-wide: a vmid any live host reports is taken.
    vmidReported: db.prepare<[number], number>("SELECT 1 FROM host_guests g JOIN hosts h ON h.id = g.host_id WHERE g.vmid = ? AND h.state != 'deleted' LIMIT 1").pluck(),
    guestPage: db.prepare<[number, number, number], GuestRow>(`SELECT ${GUEST_COLUMNS} FROM host_guests WHERE host_id = ? AND vmid > ? ORDER BY vmid LIMIT ?`),
    guestsHashOf: db.prepare<[number], string>('SELECT guests_hash FROM hosts WHERE id = ?').pluck(),
    guestsNotRunning: db.prepare<[number], Pick<GuestRow, 'vmid' | 'name' | 'status'>>("SELECT vmid, name, status FROM host_guests WHERE host_id = ? AND status != 'running' ORDER BY vmid"),
    deleteGuest: db.prepare<[number, number]>('DELETE FROM host_guests WHERE host_id = ? AND vmid = ?'),
    insertGuest: db.prepare<[number, number, string, string, string, string | null, number, string | null]>(
      'INSERT OR REPLACE INTO host_guests (host_id, vmid, name, type, status, config_sha256, template, lock) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    // Every host's guests, each with what drift needs of the hosts' side: `shared` when the guest is
    // not a template, its host is online, and another online host reports the vmid too. @fresh is the
    // oldest online heartbeat. The registry's side (instance names) is asked of the registry.
    guestFacts: db.prepare<{ fresh: number }, GuestFact>(
      `SELECT g.host_id, g.vmid, g.name, g.template,
              CASE WHEN g.template = 0 AND gh.last_heartbeat_at >= @fresh AND EXISTS (
                     SELECT 1 FROM host_guests o JOIN hosts oh ON oh.id = o.host_id
                      WHERE o.vmid = g.vmid AND o.host_id != g.host_id AND o.template = 0 AND oh.state != 'deleted' AND oh.last_heartbeat_at >= @fresh)
                   THEN 1 ELSE 0 END AS shared
         FROM host_guests g JOIN hosts gh ON gh.id = g.host_id`,
    ),
    // The other online hosts (not deleted, a heartbeat at or after ?) that report a vmid this host reports, not as a template.
    sharedVmids: db.prepare<[number, number], { vmid: number; id: number; hostname: string }>(
      `SELECT g.vmid, oh.id, oh.hostname
         FROM host_guests g
         JOIN host_guests o ON o.vmid = g.vmid AND o.host_id != g.host_id AND o.template = 0
         JOIN hosts oh ON oh.id = o.host_id AND oh.state != 'deleted' AND oh.last_heartbeat_at >= ?
        WHERE g.host_id = ?
        ORDER BY g.vmid, oh.id`,
    ),

    // Removals are operations of type uninstall: pending, sent (delivered), succeeded (confirmed), cancelled (forced).
    insertDeletion: db.prepare<[string, number, string | null, number]>(
      "INSERT INTO operations (id, host_id, type, status, requested_by, requested_at) VALUES (?, ?, 'uninstall', 'pending', ?, ?)",
    ),
    deletionById: db.prepare<[string], DeletionRow>(`${DELETION} WHERE id = ? AND type = 'uninstall'`),
    latestDeletionOf: db.prepare<[number], DeletionRow>(`${DELETION} WHERE host_id = ? AND type = 'uninstall' ORDER BY requested_at DESC, rowid DESC LIMIT 1`),
    deliverDeletion: db.prepare<[string, number, number, string]>(
      "UPDATE operations SET status = 'sent', receipt_hash = ?, receipt_expires_at = ?, sent_at = ? WHERE id = ? AND type = 'uninstall' AND status = 'pending'",
    ),
    // Delivered removals whose receipt token expired with no receipt: nothing can confirm them any more.
    receiptsExpired: db.prepare<[number], string>(
      "SELECT id FROM operations WHERE type = 'uninstall' AND status = 'sent' AND receipt_expires_at < ? ORDER BY requested_at LIMIT 100",
    ).pluck(),
    expireDeletion: db.prepare<[number, string]>("UPDATE operations SET status = 'expired', finished_at = ? WHERE id = ? AND type = 'uninstall' AND status = 'sent'"),
    confirmDeletion: db.prepare<[number, string]>(
      "UPDATE operations SET status = 'succeeded', finished_at = ? WHERE id = ? AND type = 'uninstall' AND status = 'sent'",
    ),
    forceDeletion: db.prepare<[number, number]>(
      `UPDATE operations SET status = 'cancelled', forced = 1, receipt_hash = NULL, finished_at = ?
        WHERE host_id = ? AND type = 'uninstall' AND status IN ('pending', 'sent')`,
    ),
  };

  return {
    insertEnrollmentToken: (name: string, hash: string, by: string | null, now: number, expiresAt: number, maxUses: number, hostId: number | null) =>
      Number(s.insertEnrollment.run(name, hash, by, now, expiresAt, maxUses, hostId).lastInsertRowid),
    rebindableHosts: (now: number) => new Set(s.rebindable.all(now)),
    enrollmentTokenById: (id: number) => s.enrollmentById.get(id),
    enrollmentTokenByHash: (hash: string) => s.enrollmentByHash.get(hash),
    listEnrollmentTokens: () => s.listEnrollment.all(),
    revokeEnrollmentToken: (id: number, now: number) => s.revokeEnrollment.run(now, id).changes > 0,
    useEnrollmentToken: (id: number, now: number) => s.useEnrollment.run(id, now).changes === 1,

    hostById: (id: number) => s.hostById.get(id),
    liveHostByMachine: (machineId: string) => s.liveHostByMachine.get(machineId),
    listHosts: () => s.listHosts.all(),
    insertHost: (machineId: string, hostname: string, now: number, tokenId: number, version: string, intervalS: number) =>
      Number(s.insertHost.run(machineId, hostname, now, tokenId, version, intervalS).lastInsertRowid),
    rebindHost(id: number, hostname: string, version: string, tokenId: number, now: number): void {
      s.rebindHost.run(hostname, version, tokenId, id);
      s.cancelUpgrades.run(now, id);
    },
    updateFacts: (facts: FactsUpdate) => void s.updateFacts.run(facts),
    /** Active hosts whose last heartbeat fell in (from, to]: they crossed the offline line since the last sweep. */
    wentOffline: (from: number, to: number) => s.wentOffline.all(from, to),
    upgradesTimedOut: (before: number) => s.upgradesTimedOut.all(before),
    setGuestsHash: (id: number, hash: string) => void s.setGuestsHash.run(hash, id),
    setSettings: (id: number, syncRegistry: boolean | undefined, allowRebind: boolean | undefined) =>
      void s.setSettings.run(
        syncRegistry === undefined ? null : Number(syncRegistry),
        allowRebind === undefined ? null : Number(allowRebind),
        id,
      ),
    setState: (id: number, state: HostRow['state'], deletedAt: number | null) => void s.setState.run(state, deletedAt, id),
    /** A new upgrade asked of the host: open ones before it are cancelled (the newest request is the one that counts). Returns its operation id. */
    insertUpgrade(id: string, hostId: number, u: UpgradeRecord, by: string | null, auto = false): string {
      s.cancelUpgrades.run(u.requestedAt ?? 0, hostId);
      s.insertUpgrade.run(id, hostId, JSON.stringify({ version: u.version, from: u.from, ...(auto ? { auto: true } : {}) }), by, u.requestedAt ?? 0);
      return id;
    },
    /** Moves the host's current upgrade (server/releases/upgrades.ts says how); returns its operation id. */
    setUpgrade(hostId: number, u: UpgradeRecord): string | undefined {
      const status = u.state === 'in_progress' ? 'sent' : (u.state ?? 'cancelled');
      s.setUpgrade.run(status, u.from, u.startedAt, u.finishedAt, hostId);
      return s.currentUpgradeId.get(hostId);
    },

    insertHostToken: (hostId: number, hash: string, now: number) => void s.insertHostToken.run(hostId, hash, now),
    hostTokenByHash: (hash: string) => s.hostTokenByHash.get(hash),
    revokeHostTokens: (hostId: number, now: number) => s.revokeHostTokens.run(now, hostId).changes,

    guestsOf: (hostId: number) => s.guestsOf.all(hostId).map(presentGuest),
    guestOf: (hostId: number, vmid: number) => {
      const guest = s.guestOf.get(hostId, vmid);
      return guest && presentGuest(guest);
    },
    /** Whether any live host's last heartbeat listed this vmid. */
    vmidReported: (vmid: number) => s.vmidReported.get(vmid) !== undefined,
    /** Up to `limit` guests with a vmid above `afterVmid`, by vmid. */
    guestPage: (hostId: number, afterVmid: number, limit: number) => s.guestPage.all(hostId, afterVmid, limit).map(presentGuest),
    guestsHashOf: (hostId: number) => s.guestsHashOf.get(hostId),
    /** A host's guests whose status is other than `running`: what alerts look at, without reading a 10,000-guest list each pass. */
    guestsNotRunning: (hostId: number) => s.guestsNotRunning.all(hostId),
    /** Writes what differs from the stored guest list (server/hosts/guest-list.ts): rows untouched are not rewritten. */
    changeGuests(hostId: number, upserts: readonly Guest[], deletes: readonly number[]): void {
      for (const vmid of deletes) s.deleteGuest.run(hostId, vmid);
      for (const g of upserts) s.insertGuest.run(hostId, g.vmid, g.name, g.type, g.status, g.config_sha256 ?? null, Number(g.template), g.lock);
    },
    /** Every host's guests with their `shared` flag (the host list's counts); `freshSince`: the oldest heartbeat time (ms) of an online host. */
    guestFacts: (freshSince: number) => s.guestFacts.all({ fresh: freshSince }),
    sharedVmids: (hostId: number, freshSince: number) => s.sharedVmids.all(freshSince, hostId),

    insertDeletion: (id: string, hostId: number, by: string | null, now: number) => void s.insertDeletion.run(id, hostId, by, now),
    deletionById: (id: string) => s.deletionById.get(id),
    latestDeletionOf: (hostId: number) => s.latestDeletionOf.get(hostId),
    deliverDeletion: (id: string, receiptHash: string, expiresAt: number, now: number) =>
      s.deliverDeletion.run(receiptHash, expiresAt, now, id).changes === 1,
    confirmDeletion: (id: string, now: number) => s.confirmDeletion.run(now, id).changes === 1,
    receiptsExpired: (now: number) => s.receiptsExpired.all(now),
    expireDeletion: (id: string, now: number) => s.expireDeletion.run(now, id).changes === 1,
    forceDeletions: (hostId: number, now: number) => void s.forceDeletion.run(now, hostId),
  };
}
