import type { Db } from '../db/database.js';
import type { Collectors, Guest, UpgradeState } from '../contract/hosts.js';
import type { AgentChannel } from '../contract/versions.js';
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
  /** The agent reports it was installed with --allow-scripts. */
  allows_scripts: 0 | 1;
  deleted_at: number | null;
  agent_channel: AgentChannel;
  agent_pin: string | null;
  collect_metrics: 0 | 1;
  collect_configs: 0 | 1;
  collect_storage: 0 | 1;
  collect_backups: 0 | 1;
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
  allows_scripts: 0 | 1;
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

/** A host's current upgrade as its row shows it: the latest one not cancelled (`sent` is `in_progress`). */
export type UpgradeColumns = Pick<
  HostRow,
  'upgrade_state' | 'upgrade_version' | 'upgrade_from' | 'upgrade_requested_at' | 'upgrade_started_at' | 'upgrade_finished_at'
>;

/**
 * A host's upgrades and its removals are rows of `operations`, which the operations feature owns
 * (server/operations/host-repo.ts): server/services.ts hands its functions to this repo, which keeps
 * offering them with the host's own rows.
 */
export interface HostOperationRows {
  currentUpgrade(hostId: number): UpgradeColumns | undefined;
  /** Each host's current upgrade, by host id (hosts without one are absent). */
  currentUpgrades(): Map<number, UpgradeColumns>;
  /** Hosts whose current upgrade was offered (`sent`) before this time. */
  upgradesSentBefore(before: number): number[];
  /** Ends the host's open upgrades: a re-bound host starts without the one it was in. */
  cancelUpgrades(hostId: number, now: number): void;
  /** A new upgrade asked of the host: open ones before it are cancelled (the newest request is the one that counts). Returns its operation id. */
  insertUpgrade(id: string, hostId: number, u: UpgradeRecord, by: string | null, auto?: boolean): string;
  /** Moves the host's current upgrade (server/releases/upgrades.ts says how); returns its operation id. */
  setUpgrade(hostId: number, u: UpgradeRecord): string | undefined;
  insertDeletion(id: string, hostId: number, by: string | null, now: number): void;
  deletionById(id: string): DeletionRow | undefined;
  latestDeletionOf(hostId: number): DeletionRow | undefined;
  deliverDeletion(id: string, receiptHash: string, expiresAt: number, now: number): boolean;
  confirmDeletion(id: string, now: number): boolean;
  receiptsExpired(now: number): string[];
  expireDeletion(id: string, now: number): boolean;
  forceDeletions(hostId: number, now: number): void;
}

/** A host's collectors as its row keeps them. */
export const collectorsOf = (host: Pick<HostRow, 'collect_metrics' | 'collect_configs' | 'collect_storage' | 'collect_backups'>): Collectors => ({
  metrics: host.collect_metrics === 1,
  configs: host.collect_configs === 1,
  storage: host.collect_storage === 1,
  backups: host.collect_backups === 1,
});

const NO_UPGRADE: UpgradeColumns = {
  upgrade_state: null, upgrade_version: null, upgrade_from: null, upgrade_requested_at: null, upgrade_started_at: null, upgrade_finished_at: null,
};

type StoredHost = Omit<HostRow, keyof UpgradeColumns>;

/** SQL of hosts and agents; every statement prepared once. */
export function createHostRepo(db: Db, ops: HostOperationRows) {
  const withUpgrade = (host: StoredHost | undefined): HostRow | undefined => host && { ...host, ...(ops.currentUpgrade(host.id) ?? NO_UPGRADE) };
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

    hostById: db.prepare<[number], StoredHost>('SELECT * FROM hosts WHERE id = ?'),
    liveHostByMachine: db.prepare<[string], StoredHost>("SELECT * FROM hosts WHERE machine_id = ? AND state != 'deleted'"),
    listHosts: db.prepare<[], StoredHost>('SELECT * FROM hosts ORDER BY hostname COLLATE NOCASE, id'),
    insertHost: db.prepare<[string, string, number, number, string, number]>(
      `INSERT INTO hosts (machine_id, hostname, enrolled_at, enrollment_token_id, agent_version, heartbeat_interval_s)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    rebindHost: db.prepare<[string, string, number, number]>(
      'UPDATE hosts SET hostname = ?, agent_version = ?, enrollment_token_id = ?, allow_rebind = 0 WHERE id = ?',
    ),
    updateFacts: db.prepare<FactsUpdate>(
      `UPDATE hosts SET hostname = @hostname, agent_version = @agent_version, agent_started_at = @agent_started_at,
         last_heartbeat_at = @last_heartbeat_at, addresses = @addresses, uptime_s = @uptime_s,
         hypervisor_version = @hypervisor_version, allows_scripts = @allows_scripts
       WHERE id = @id`,
    ),
    wentOffline: db.prepare<[number, number], StoredHost>(
      "SELECT * FROM hosts WHERE state = 'active' AND last_heartbeat_at > ? AND last_heartbeat_at <= ?",
    ),
    setGuestsHash: db.prepare<[string, number]>('UPDATE hosts SET guests_hash = ? WHERE id = ?'),
    setSettings: db.prepare<[number | null, number | null, number]>(
      'UPDATE hosts SET sync_registry = coalesce(?, sync_registry), allow_rebind = coalesce(?, allow_rebind) WHERE id = ?',
    ),
    setAgentSettings: db.prepare<[AgentChannel, string | null, number, number, number, number, number]>(
      `UPDATE hosts SET agent_channel = ?, agent_pin = ?, collect_metrics = ?, collect_configs = ?, collect_storage = ?, collect_backups = ?
       WHERE id = ?`,
    ),
    setState: db.prepare<[string, number | null, number]>('UPDATE hosts SET state = ?, deleted_at = ? WHERE id = ?'),

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
    // The first few guests (not templates) and how many there are, counted by SQLite: no row of the rest reaches JavaScript.
    guestSample: db.prepare<[number, number], { vmid: number; name: string; total: number }>(
      'SELECT vmid, name, count(*) OVER () AS total FROM host_guests WHERE host_id = ? AND template = 0 ORDER BY vmid LIMIT ?',
    ),
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

    hostById: (id: number) => withUpgrade(s.hostById.get(id)),
    liveHostByMachine: (machineId: string) => withUpgrade(s.liveHostByMachine.get(machineId)),
    listHosts(): HostRow[] {
      const upgrades = ops.currentUpgrades();
      return s.listHosts.all().map((host) => ({ ...host, ...(upgrades.get(host.id) ?? NO_UPGRADE) }));
    },
    insertHost: (machineId: string, hostname: string, now: number, tokenId: number, version: string, intervalS: number) =>
      Number(s.insertHost.run(machineId, hostname, now, tokenId, version, intervalS).lastInsertRowid),
    rebindHost(id: number, hostname: string, version: string, tokenId: number, now: number): void {
      s.rebindHost.run(hostname, version, tokenId, id);
      // A re-bound host starts without the upgrade it was in: the new agent is whatever was installed.
      ops.cancelUpgrades(id, now);
    },
    updateFacts: (facts: FactsUpdate) => void s.updateFacts.run(facts),
    /** Active hosts whose last heartbeat fell in (from, to]: they crossed the offline line since the last sweep. */
    wentOffline: (from: number, to: number) => s.wentOffline.all(from, to).map((host) => withUpgrade(host)!),
    /** Hosts whose current upgrade was offered before `before` and has not settled. */
    upgradesTimedOut: (before: number) => ops.upgradesSentBefore(before).map((id) => withUpgrade(s.hostById.get(id))!),
    setGuestsHash: (id: number, hash: string) => void s.setGuestsHash.run(hash, id),
    setSettings: (id: number, syncRegistry: boolean | undefined, allowRebind: boolean | undefined) =>
      void s.setSettings.run(
        syncRegistry === undefined ? null : Number(syncRegistry),
        allowRebind === undefined ? null : Number(allowRebind),
        id,
      ),
    /** The agent's release channel, pin and collectors, written whole. */
    setAgentSettings: (id: number, channel: AgentChannel, pin: string | null, c: Collectors) =>
      void s.setAgentSettings.run(channel, pin, Number(c.metrics), Number(c.configs), Number(c.storage), Number(c.backups), id),
    setState: (id: number, state: HostRow['state'], deletedAt: number | null) => void s.setState.run(state, deletedAt, id),
    insertUpgrade: ops.insertUpgrade,
    setUpgrade: ops.setUpgrade,

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
    /** A host's first `limit` guests that are not templates (by vmid), and how many it has in all. */
    guestSample(hostId: number, limit: number): { first: { vmid: number; name: string }[]; total: number } {
      const rows = s.guestSample.all(hostId, limit);
      return { first: rows.map(({ vmid, name }) => ({ vmid, name })), total: rows[0]?.total ?? 0 };
    },
    /** Writes what differs from the stored guest list (server/hosts/guest-list.ts): rows untouched are not rewritten. */
    changeGuests(hostId: number, upserts: readonly Guest[], deletes: readonly number[]): void {
      for (const vmid of deletes) s.deleteGuest.run(hostId, vmid);
      for (const g of upserts) s.insertGuest.run(hostId, g.vmid, g.name, g.type, g.status, g.config_sha256 ?? null, Number(g.template), g.lock);
    },
    /** Every host's guests with their `shared` flag (the host list's counts); `freshSince`: the oldest heartbeat time (ms) of an online host. */
    guestFacts: (freshSince: number) => s.guestFacts.all({ fresh: freshSince }),
    sharedVmids: (hostId: number, freshSince: number) => s.sharedVmids.all(freshSince, hostId),

    insertDeletion: ops.insertDeletion,
    deletionById: ops.deletionById,
    latestDeletionOf: ops.latestDeletionOf,
    deliverDeletion: ops.deliverDeletion,
    confirmDeletion: ops.confirmDeletion,
    receiptsExpired: ops.receiptsExpired,
    expireDeletion: ops.expireDeletion,
    forceDeletions: ops.forceDeletions,
  };
}
