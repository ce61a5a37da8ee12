import type { AppContext } from '../context.js';
import type { RetentionPolicy } from '../contract/usage.js';
import { isoSeconds } from '../time.js';

export interface UsageRetentionOptions {
  /** How often old reports are deleted (a day); the first pass runs at start. */
  intervalMs?: number;
}

/**
 * Ingestion is unauthenticated, so the table must not grow without bound: reports older than
 * FLEET_USAGE_RETENTION_DAYS, and the oldest beyond FLEET_USAGE_MAX_REPORTS, are deleted at start
 * and then daily, in one transaction.
 */
export function createUsageRetention(ctx: AppContext, options: UsageRetentionOptions = {}) {
  const { db, clock, logger, config } = ctx;
  const policy: RetentionPolicy = { max_age_days: config.usageRetentionDays, max_reports: config.usageMaxReports };
  const byAge = db.prepare<[string]>('DELETE FROM usage_reports WHERE created_at < ?');
  const byCount = db.prepare<[number]>(
    'DELETE FROM usage_reports WHERE id <= (SELECT id FROM usage_reports ORDER BY id DESC LIMIT 1 OFFSET ?)',
  );
  const prune = db.transaction((now: number) => {
    const aged = byAge.run(isoSeconds(now - policy.max_age_days * 86_400_000)).changes;
    const over = byCount.run(policy.max_reports).changes;
    return aged + over;
  });

  function run(): number {
    if (!db.open) return 0;
    const deleted = prune(clock.now());
    if (deleted) logger.info({ deleted, ...policy }, 'old usage reports deleted');
    return deleted;
  }

  return {
    policy,
    run,
    start(): void {
      run();
      ctx.tasks.every('usage.retention', options.intervalMs ?? 86_400_000, run);
    },
  };
}

export type UsageRetention = ReturnType<typeof createUsageRetention>;
