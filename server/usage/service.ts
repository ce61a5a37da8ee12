import type { AppContext } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { isoSeconds } from '../time.js';
import { createUsageRepo } from './repo.js';
import type { UsageCounts, UsageReport, UsageStart, UsageUpdate } from './schema.js';

export type UsageService = ReturnType<typeof createUsageService>;

/** Part B's report lifecycle: a start report creates the record, the update finishes it. */
export function createUsageService({ db, clock, events }: AppContext) {
  const repo = createUsageRepo(db);
  const now = () => isoSeconds(clock.now());

  function counts(): UsageCounts {
    return db.transaction(() => ({ total: repo.total(), by_nsapp: repo.byNsapp(), by_status: repo.byStatus() }))();
  }

  return {
    start(report: UsageStart): void {
      if (!repo.insert(report, now())) throw conflict('usage report already exists');
      const stored = repo.byRandomId(report.random_id);
      if (stored) events.emit('usage.report', stored);
    },
    update(change: UsageUpdate): void {
      if (!repo.update(change, now())) throw notFound('usage report not found');
      const stored = repo.byRandomId(change.random_id);
      if (stored) events.emit('usage.report', stored);
    },
    /** Newest first; `before` is the id the previous page ended at. */
    recent(limit: number, before?: number): { reports: UsageReport[]; next_before: number | null } {
      const reports = repo.page(before ?? Number.MAX_SAFE_INTEGER, limit);
      const last = reports.at(-1);
      return { reports, next_before: reports.length === limit && last ? last.id : null };
    },
    counts,
  };
}
