import type { Db } from '../db/database.js';
import type { UsageStart, UsageUpdate } from '../contract/inputs/usage.js';
import type { UsageCount, UsageReport } from '../contract/usage.js';

const COLUMNS =
  'id, random_id, type, ct_type, disk_size, core_count, ram_size, os_type, os_version, disableip6, nsapp, method, pve_version, status, error, created_at, updated_at';

export type UsageRepo = ReturnType<typeof createUsageRepo>;

/** SQL of usage reports, statements prepared once. */
export function createUsageRepo(db: Db) {
  // Both answer the stored row (RETURNING), which the live stream sends: no second read.
  const insert = db.prepare<UsageStart & { at: string }, UsageReport>(
    `INSERT INTO usage_reports (random_id, type, ct_type, disk_size, core_count, ram_size, os_type, os_version, disableip6,
       nsapp, method, pve_version, status, error, created_at, updated_at)
     VALUES (@random_id, @type, @ct_type, @disk_size, @core_count, @ram_size, @os_type, @os_version, @disableip6,
       @nsapp, @method, @pve_version, @status, NULL, @at, @at)
     ON CONFLICT (random_id) DO NOTHING
     RETURNING ${COLUMNS}`,
  );
  const update = db.prepare<UsageUpdate & { at: string }, UsageReport>(
    `UPDATE usage_reports SET status = @status, error = @error, updated_at = @at WHERE random_id = @random_id RETURNING ${COLUMNS}`,
  );
  const page = db.prepare<[number, number], UsageReport>(
    `SELECT ${COLUMNS} FROM usage_reports WHERE id < ? ORDER BY id DESC LIMIT ?`,
  );
  const total = db.prepare<[], { count: number }>('SELECT COUNT(*) AS count FROM usage_reports');
  const byNsapp = db.prepare<[], UsageCount>(
    'SELECT nsapp AS key, COUNT(*) AS count FROM usage_reports GROUP BY nsapp ORDER BY count DESC, key',
  );
  const byStatus = db.prepare<[], UsageCount>(
    'SELECT status AS key, COUNT(*) AS count FROM usage_reports GROUP BY status ORDER BY count DESC, key',
  );

  return {
    /** The stored report; undefined when a report with this random_id exists already. */
    insert: (report: UsageStart, at: string) => insert.get({ ...report, at }),
    /** The updated report; undefined when no report has this random_id. */
    update: (change: UsageUpdate, at: string) => update.get({ ...change, at }),
    page: (beforeId: number, limit: number) => page.all(beforeId, limit),
    total: () => total.get()!.count,
    byNsapp: () => byNsapp.all(),
    byStatus: () => byStatus.all(),
  };
}
