import type { BackupSources } from './backup/service.js';
import { createCollectionsBackup } from './collections/backup.js';
import type { Db } from './db/database.js';
import { createJobsBackup } from './jobs/backup.js';
import { createRegistryBackup } from './registry/backup.js';
import { createScriptsBackup } from './scripts/backup.js';

/**
 * The tables a backup carries, each read and written by the feature that owns it, on `db`: the
 * server's connection (server/services.ts), or the import helper's own (server/import-helper.ts).
 */
export const backupSourcesOn = (db: Db): BackupSources => ({
  registry: createRegistryBackup(db),
  jobs: createJobsBackup(db),
  scripts: createScriptsBackup(db),
  collections: createCollectionsBackup(db),
});
