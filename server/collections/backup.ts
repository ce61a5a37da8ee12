import type { BackupCollection } from '../contract/collections.js';
import type { Db } from '../db/database.js';
import { createCollectionRepo } from './repo.js';

export type CollectionsBackup = ReturnType<typeof createCollectionsBackup>;

/** The collections table as a backup carries it (server/backup asks for it through server/services.ts). */
export function createCollectionsBackup(db: Db) {
  const repo = createCollectionRepo(db);
  return {
    exportCollections: (): BackupCollection[] => repo.all().sort((a, b) => a.id - b.id),
    /** Replaces the collections when the backup has them; keeps them when it has none (a backup written before they existed). Only inside the importer's transaction. */
    importRows(rows: readonly BackupCollection[] | undefined): void {
      if (!db.inTransaction) throw new Error('collections importRows runs only inside the import’s transaction');
      if (rows) repo.replaceAll(rows);
    },
  };
}
