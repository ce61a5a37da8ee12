import type { AppContext } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { isoSeconds } from '../time.js';
import { createUsageRepo } from './repo.js';
import type { UsageStart, UsageUpdate } from '../contract/inputs/usage.js';
import type { UsageCounts, UsageList } from '../contract/usage.js';

export type UsageService = ReturnType<typeof createUsageService>;

/** Part B's report lifecycle: a start report creates the record, the update finishes it. */
export function createUsageService({ db, clock, bus, transaction }: AppContext) {
  const repo = createUsageRepo(db);
  const now = () => isoSeconds(clock.now());

  // One read transaction: the three counts agree with each other.
  const readCounts = transaction((): UsageCounts => ({ total: repo.total(), by_nsapp: repo.byNsapp(), by_status: repo.byStatus() }));

  function counts(): UsageCounts {
    return readCounts();
  }

  return {
    start(report: UsageStart): void {
      const stored = repo.insert(report, now());
      if (!stored) throw conflict('usage report already exists');
      bus.publish('usage.report', stored);
    },
    update(change: UsageUpdate): void {
      const stored = repo.update(change, now());
      if (!stored) throw notFound('usage report not found');
      bus.publish('usage.report', stored);
    },
    /** Newest first; `before` is the id the previous page ended at. */
    recent(limit: number, before?: number): Omit<UsageList, 'counts'> {
      const reports = repo.page(before ?? Number.MAX_SAFE_INTEGER, limit);
      const last = reports.at(-1);
      return { reports, next_before: reports.length === limit && last ? last.id : null };
    },
    counts,
  };
}
