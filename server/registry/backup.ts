import type { BackupHistoryRow } from '../contract/backup.js';
import type { BackupInstance } from '../contract/inputs/backup.js';
import type { Instance } from '../contract/registry.js';
import type { Db } from '../db/database.js';
import { isoMillis, isoSeconds } from '../time.js';
import { createPastRepo } from './past.js';
import { COLUMNS, joinTags, splitTags } from './repo.js';

export type RegistryBackup = ReturnType<typeof createRegistryBackup>;

/** Rows an import writes (or deletes) between two of its steps: a few milliseconds of work. */
const IMPORT_SLICE = 1000;

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
  // Old rows go in slices as well: one DELETE of 200,000 instances is half a second of one turn.
  const deleteHistory = db.prepare<[number]>('DELETE FROM instance_history WHERE id IN (SELECT id FROM instance_history LIMIT ?)');
  const deleteInstances = db.prepare<[number]>('DELETE FROM instances WHERE id IN (SELECT id FROM instances LIMIT ?)');
  const insertInstance = db.prepare(`INSERT INTO instances (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertHistory = db.prepare(
    'INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const importedBetween = db.prepare<[string, number, number]>(
    "INSERT INTO instance_history (instance_id, field, old_value, new_value, changed_at, changed_by) SELECT id, 'imported', NULL, NULL, ?, 'import' FROM instances WHERE id BETWEEN ? AND ? ORDER BY id",
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
     *
     * A step at a time: it yields after each slice of rows, and the importer lets other work run
     * between slices (server/backup/service.ts). Run to its end at once, it is one plain loop.
     */
    *importRows(instances: readonly BackupInstance[], history: readonly BackupHistoryRow[] | undefined, now: number): Generator<void, void, void> {
      if (!db.inTransaction) throw new Error('registry importRows runs only inside the import’s transaction');
      while (deleteHistory.run(IMPORT_SLICE).changes > 0) yield;
      while (deleteInstances.run(IMPORT_SLICE).changes > 0) yield;
      past.forgetDeleted();
      const at = isoSeconds(now);
      // Every instance was deleted: those written now are the only rows, numbered in the order written.
      const ids = new Array<number>(instances.length);
      const idOf = history ? new Map<number, number>() : undefined;
      for (let k = 0; k < instances.length; k++) {
        const i = instances[k]!;
        const { lastInsertRowid } = insertInstance.run(
          i.vmid, i.name, i.state, i.stack, i.tailscale_ip, i.atlas, i.argus, i.semaphore, i.patchmon, i.tailscale,
          i.andromeda, i.hardware_acceleration, joinTags(i.tags), i.created_at ?? at, i.updated_at ?? i.created_at ?? at,
        );
        ids[k] = Number(lastInsertRowid);
        idOf?.set(i.vmid, ids[k]!);
        if (k % IMPORT_SLICE === IMPORT_SLICE - 1) yield;
      }
      if (history && idOf) {
        for (let k = 0; k < history.length; k++) {
          const h = history[k]!;
          insertHistory.run(idOf.get(h.vmid)!, h.field, h.old_value, h.new_value, h.changed_at, h.changed_by);
          if (k % IMPORT_SLICE === IMPORT_SLICE - 1) yield;
        }
      }
      const importedAt = isoMillis(now);
      for (let k = 0; k < ids.length; k += IMPORT_SLICE) {
        importedBetween.run(importedAt, ids[k]!, ids[Math.min(k + IMPORT_SLICE, ids.length) - 1]!);
        yield;
      }
    },
  };
}
