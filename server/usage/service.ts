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
      const stored = repo.insert(report, now());
      if (!stored) throw conflict('usage report already exists');
      events.emit('usage.report', stored);
    },
    update(change: UsageUpdate): void {
      const stored = repo.update(change, now());
      if (!stored) throw notFound('usage report not found');
      events.emit('usage.report', stored);
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
