import type { BackupHistoryRow } from '../contract/backup.js';
import type { BackupInstance } from '../contract/inputs/backup.js';
import type { Instance } from '../contract/registry.js';
import type { Db } from '../db/database.js';
import { isoMillis, isoSeconds } from '../time.js';
import { createPastRepo } from './past.js';
import { COLUMNS, joinTags, splitTags } from './repo.js';

export type RegistryBackup = ReturnType<typeof createRegistryBackup>;

/**
 * The registry's tables as a backup carries them (server/backup asks for them through
 * server/services.ts): read whole for an export, replaced whole by an import. Statements are
 * prepared once and run in a plain loop: an import of 100,000 instances costs no more than the
 * inserts themselves.
 */
export function createRegistryBackup(db: Db) {
  const selectInstances = db.prepare<[], Omit<Instance, 'tags'> & { tags: string }>(`SELECT ${COLUMNS} FROM instances ORDER BY id`);
  const selectHistory = db.prepare<[], BackupHistoryRow>(
    `SELECT i.vmid, h.field, h.old_value, h.new_value, h.changed_at, h.changed_by
       FROM instance_history h JOIN instances i ON i.id = h.instance_id ORDER BY h.id`,
  );
  const past = createPastRepo(db);
  const deleteHistory = db.prepare('DELETE FROM instance_history');
  const deleteInstances = db.prepare('DELETE FROM instances');
  const insertInstance = db.prepare(`INSERT INTO instances (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertHistory = db.prepare(
    'INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const historyForAll = db.prepare<[string]>(
    "INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by) SELECT id, 'imported', NULL, NULL, ?, 'import' FROM instances ORDER BY id",
  );

  return {
    exportInstances: (): Instance[] => selectInstances.all().map((row) => ({ ...row, tags: splitTags(row.tags) })),
    /** Every instance's change timeline, oldest first, each entry naming its instance by vmid. */
    exportHistory: (): BackupHistoryRow[] => selectHistory.all(),

    /**
     * Replaces every instance, with their history when the backup has it (each entry's vmid names
     * one of `instances`), and adds an `imported` entry to each. The registry's past becomes the
     * backup's: the deleted instances kept for time travel are forgotten. Only inside the importer's
     * transaction, which holds its audit entry too: the two commit together or not at all.
     */
    importRows(instances: readonly BackupInstance[], history: readonly BackupHistoryRow[] | undefined, now: number): void {
      if (!db.inTransaction) throw new Error('registry importRows runs only inside the import’s transaction');
      deleteHistory.run();
      deleteInstances.run();
      past.forgetDeleted();
      const at = isoSeconds(now);
      const ids = history ? new Map<number, number | bigint>() : undefined;
      for (const i of instances) {
        const { lastInsertRowid } = insertInstance.run(
          i.vmid, i.name, i.state, i.stack, i.tailscale_ip, i.atlas, i.argus, i.semaphore, i.patchmon, i.tailscale,
          i.andromeda, i.hardware_acceleration, joinTags(i.tags), i.created_at ?? at, i.updated_at ?? i.created_at ?? at,
        );
        ids?.set(i.vmid, lastInsertRowid);
      }
      if (history && ids) {
        for (const h of history) insertHistory.run(ids.get(h.vmid)!, h.field, h.old_value, h.new_value, h.changed_at, h.changed_by);
      }
      historyForAll.run(isoMillis(now));
    },
  };
}
