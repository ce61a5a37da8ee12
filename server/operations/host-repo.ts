import type { Db } from '../db/database.js';
import type { DeletionRow, HostOperationRows, UpgradeColumns } from '../hosts/repo.js';
import type { UpgradeRecord } from '../releases/upgrades.js';

/**
 * What a host's row shows of its operations (server/db/migrations/0010): its current upgrade, and its
 * removals. Operations own the table; hosts get these functions through server/services.ts.
 */
const UPGRADE = `SELECT host_id,
    CASE status WHEN 'sent' THEN 'in_progress' WHEN 'expired' THEN 'failed' ELSE status END AS upgrade_state,
    json_extract(params, '$.version') AS upgrade_version, json_extract(params, '$.from') AS upgrade_from,
    requested_at AS upgrade_requested_at, sent_at AS upgrade_started_at, finished_at AS upgrade_finished_at
  FROM operations`;
/** The latest upgrade of a host that was not cancelled: the one its row shows. */
const CURRENT_UPGRADE = "SELECT id FROM operations WHERE host_id = ? AND type = 'upgrade' AND status != 'cancelled' ORDER BY requested_at DESC, rowid DESC LIMIT 1";
/** A host removal as the hosts API has always shown it, read from its operation. */
const DELETION = `SELECT id, host_id,
    CASE status WHEN 'sent' THEN 'delivered' WHEN 'succeeded' THEN 'confirmed' WHEN 'cancelled' THEN 'forced' ELSE status END AS status,
    requested_by AS created_by, requested_at AS created_at, receipt_hash, receipt_expires_at, sent_at AS delivered_at, finished_at AS confirmed_at
  FROM operations`;

type UpgradeOfHost = UpgradeColumns & { host_id: number };
const columns = ({ host_id: _host, ...upgrade }: UpgradeOfHost): UpgradeColumns => upgrade;

export function createHostOperationRows(db: Db): HostOperationRows {
  const s = {
    currentUpgrade: db.prepare<[number], UpgradeOfHost>(`${UPGRADE} WHERE id = (${CURRENT_UPGRADE})`),
    // Each host's current upgrade at once (the host list): the newest not cancelled, per host.
    currentUpgrades: db.prepare<[], UpgradeOfHost>(
      `${UPGRADE} o WHERE type = 'upgrade' AND status != 'cancelled' AND id = (
         SELECT id FROM operations WHERE host_id = o.host_id AND type = 'upgrade' AND status != 'cancelled' ORDER BY requested_at DESC, rowid DESC LIMIT 1)`,
    ),
    upgradesSentBefore: db.prepare<[number], number>(
      `SELECT o.host_id FROM operations o WHERE type = 'upgrade' AND status = 'sent' AND sent_at < ? AND id = (
         SELECT id FROM operations WHERE host_id = o.host_id AND type = 'upgrade' AND status != 'cancelled' ORDER BY requested_at DESC, rowid DESC LIMIT 1)`,
    ).pluck(),
    cancelUpgrades: db.prepare<[number, number]>(
      "UPDATE operations SET status = 'cancelled', finished_at = ? WHERE host_id = ? AND type = 'upgrade' AND status IN ('pending', 'sent')",
    ),
    insertUpgrade: db.prepare<[string, number, string, string | null, number]>(
      "INSERT INTO operations (id, host_id, type, params, status, requested_by, requested_at) VALUES (?, ?, 'upgrade', ?, 'pending', ?, ?)",
    ),
    setUpgrade: db.prepare<[string, string | null, number | null, number | null, number]>(
      `UPDATE operations SET status = ?, params = json_set(params, '$.from', ?), sent_at = ?, finished_at = ?
        WHERE id = (${CURRENT_UPGRADE})`,
    ),
    currentUpgradeId: db.prepare<[number], string>(CURRENT_UPGRADE).pluck(),

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
    currentUpgrade(hostId) {
      const row = s.currentUpgrade.get(hostId);
      return row && columns(row);
    },
    currentUpgrades: () => new Map(s.currentUpgrades.all().map((row) => [row.host_id, columns(row)])),
    upgradesSentBefore: (before) => s.upgradesSentBefore.all(before),
    cancelUpgrades: (hostId, now) => void s.cancelUpgrades.run(now, hostId),
    insertUpgrade(id: string, hostId: number, u: UpgradeRecord, by: string | null, auto = false): string {
      s.cancelUpgrades.run(u.requestedAt ?? 0, hostId);
      s.insertUpgrade.run(id, hostId, JSON.stringify({ version: u.version, from: u.from, ...(auto ? { auto: true } : {}) }), by, u.requestedAt ?? 0);
      return id;
    },
    setUpgrade(hostId: number, u: UpgradeRecord): string | undefined {
      const status = u.state === 'in_progress' ? 'sent' : (u.state ?? 'cancelled');
      s.setUpgrade.run(status, u.from, u.startedAt, u.finishedAt, hostId);
      return s.currentUpgradeId.get(hostId);
    },

    insertDeletion: (id, hostId, by, now) => void s.insertDeletion.run(id, hostId, by, now),
    deletionById: (id) => s.deletionById.get(id),
    latestDeletionOf: (hostId) => s.latestDeletionOf.get(hostId),
    deliverDeletion: (id, receiptHash, expiresAt, now) => s.deliverDeletion.run(receiptHash, expiresAt, now, id).changes === 1,
    confirmDeletion: (id, now) => s.confirmDeletion.run(now, id).changes === 1,
    receiptsExpired: (now) => s.receiptsExpired.all(now),
    expireDeletion: (id, now) => s.expireDeletion.run(now, id).changes === 1,
    forceDeletions: (hostId, now) => void s.forceDeletion.run(now, hostId),
  };
}
