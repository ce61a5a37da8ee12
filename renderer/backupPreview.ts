import type { BackupDocument } from '../server/contract/backup';

/** What an import would replace, read from the chosen file before anything is sent. Pure; tested. */
export interface Preview {
  fileName: string;
  text: string;
  version: number;
  exportedAt?: string;
  instances: number;
  jobs: number | null;
  runs: number | null;
  /** History entries the file carries (restored as they were), or null: the import starts each timeline anew. */
  history: number | null;
}

/** Reads a backup file just enough to say what an import would replace; the server validates every row. */
export function previewBackup(fileName: string, text: string): Preview {
  // Any JSON at all: each part is checked before it is counted.
  let doc: { [K in keyof BackupDocument]?: unknown } | null;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('This file is not JSON. Choose a homefleet backup (.json) exported from Settings.');
  }
  if (!doc || typeof doc !== 'object' || !Array.isArray(doc.instances)) throw new Error('This file has no "instances" list, so it is not a homefleet backup.');
  return {
    fileName,
    text,
    version: Number.isInteger(doc.version) ? (doc.version as number) : 1,
    exportedAt: typeof doc.exported_at === 'string' ? doc.exported_at : undefined,
    instances: doc.instances.length,
    jobs: Array.isArray(doc.jobs) ? doc.jobs.length : null,
    runs: Array.isArray(doc.job_runs) ? doc.job_runs.length : null,
    history: Array.isArray(doc.instance_history) ? doc.instance_history.length : null,
  };
}
