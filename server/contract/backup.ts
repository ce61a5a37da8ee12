import type { BackupCollection } from './collections.js';
import type { JobBase, JobRun } from './jobs.js';
import type { HistoryEntry, Instance } from './registry.js';
import type { BackupScript } from './scripts.js';

/** The format this release writes; 1 and 2 are read too (2 had no jobs, 1 lacked later instance fields). */
export const BACKUP_VERSION = 3;

/** A history entry as exported: the API's entry without its row id (an import numbers the rows anew). */
export type BackupHistoryRow = Omit<HistoryEntry, 'id'>;

/** A job as a backup carries it: its raw config, secrets included (the export needs settings.manage). */
export interface BackupJob extends JobBase {
  config: Record<string, unknown>;
}

/** GET /api/export, and the body of POST /api/import. */
export interface BackupDocument {
  version: number;
  exported_at: string;
  instances: Instance[];
  /** Every instance's change timeline, oldest first; absent from backups written before it existed. */
  instance_history: BackupHistoryRow[];
  jobs: BackupJob[];
  job_runs: JobRun[];
  /** Scripts with their kept versions; a document without them imports leaving the scripts as they are. */
  scripts: BackupScript[];
  /** The collections (saved filters); a backup without them leaves the collections as they are. */
  collections: BackupCollection[];
}

/** POST /api/import */
export interface ImportAnswer {
  imported: number;
}

export const SNAPSHOT_KINDS = ['scheduled', 'manual', 'pre-import'] as const;
export type SnapshotKind = (typeof SNAPSHOT_KINDS)[number];

/** A whole-database snapshot file. */
export interface SnapshotInfo {
  name: string;
  kind: SnapshotKind;
  taken_at: string;
  size: number;
}

/** GET /api/snapshots */
export interface SnapshotList {
  enabled: boolean;
  /** Why snapshots are off (an in-memory database). */
  reason?: string;
  directory: string | null;
  interval_hours: number;
  /** How many of each kind are kept. */
  keep: Record<SnapshotKind, number>;
  snapshots: SnapshotInfo[];
}

/** POST /api/snapshots (201) */
export interface SnapshotTaken {
  snapshot: SnapshotInfo;
}
