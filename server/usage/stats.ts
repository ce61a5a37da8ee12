import type { UsageAppStats, UsageDay, UsageStats } from '../contract/usage.js';
import type { Db } from '../db/database.js';
import { isoSeconds } from '../time.js';

/** An install still `installing` this long after its start report is counted as stuck, not in progress. */
export const STUCK_AFTER_MS = 60 * 60 * 1000;

// Anything that is neither done nor still installing is a failure ("failed" by default, part B).
const FAILED = "status NOT IN ('done', 'installing')";

/** The usage page's aggregates, computed in SQL over the last `days` days; statements prepared once. */
export function createUsageStats(db: Db) {
  const perDay = db.prepare<[string, string, string], UsageDay>(
    `SELECT substr(created_at, 1, 10) AS day,
            SUM(status = 'done') AS done,
            SUM(${FAILED}) AS failed,
            SUM(status = 'installing' AND created_at < ?) AS stuck,
            SUM(status = 'installing' AND created_at >= ?) AS installing
     FROM usage_reports WHERE created_at >= ? GROUP BY day ORDER BY day`,
  );
  const perApp = db.prepare<[string, number], Omit<UsageAppStats, 'failure_rate'>>(
    `SELECT nsapp, COUNT(*) AS total, SUM(status = 'done') AS done, SUM(${FAILED}) AS failed
     FROM usage_reports WHERE created_at >= ? GROUP BY nsapp ORDER BY total DESC, nsapp LIMIT ?`,
  );
  const errors = db.prepare<[string, number], { error: string; count: number }>(
    `SELECT COALESCE(error, '') AS error, COUNT(*) AS count FROM usage_reports
     WHERE created_at >= ? AND ${FAILED} GROUP BY COALESCE(error, '') ORDER BY count DESC, error LIMIT ?`,
  );

  return db.transaction((now: number, days: number): Omit<UsageStats, 'retention'> => {
    const since = isoSeconds(now - days * 86_400_000);
    const stuckBefore = isoSeconds(now - STUCK_AFTER_MS);
    return {
      since,
      days: perDay.all(stuckBefore, stuckBefore, since),
      apps: perApp.all(since, 20).map((app) => ({
        ...app,
        failure_rate: app.done + app.failed > 0 ? Math.round((app.failed / (app.done + app.failed)) * 1000) / 1000 : null,
      })),
      errors: errors.all(since, 10),
    };
  });
}
