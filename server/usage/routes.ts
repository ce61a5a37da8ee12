import type { RequestHandler } from 'express';
import { tooManyRequests, unsupportedMediaType } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import type { RetentionPolicy, UsageList, UsageRecorded, UsageStats, UsageSummary } from '../contract/usage.js';
import { UsageListQuery, UsageStart, UsageStatsQuery, UsageUpdate } from '../contract/inputs/usage.js';
import type { UsageService } from './service.js';
import type { createUsageStats } from './stats.js';
import type { Clock } from '../time.js';
import { fixedWindowThrottle } from './throttle.js';

/** Ingestion is open to anyone (part B: no authentication), so each peer address gets a budget. */
export const INGEST_LIMIT = { limit: 60, windowMs: 60_000 } as const;

export function registerUsageRoutes(routes: RouteTable, usage: UsageService, stats: ReturnType<typeof createUsageStats>, clock: Clock, retention?: RetentionPolicy): void {
  const throttle = fixedWindowThrottle({ ...INGEST_LIMIT, clock });

  // Runs before the body is read: a flood is refused without parsing anything.
  const ingestGuard: RequestHandler = (req, _res, next) => {
    const decision = throttle.hit(req.ip ?? req.socket.remoteAddress ?? 'unknown');
    if (!decision.allowed) throw tooManyRequests(decision.retryAfterSeconds);
    if (!req.is('application/json')) throw unsupportedMediaType('content type must be application/json');
    next();
  };
  const ingest = { access: 'machine' as const, bodyLimit: '16kb', before: [ingestGuard] };

  routes.on('POST /api/usage/upload', { ...ingest, body: UsageStart }, (_req, res, { body }): UsageRecorded => {
    usage.start(body);
    res.status(201);
    return { status: 'recorded' };
  });

  routes.on('POST /api/usage/upload/updatestatus', { ...ingest, body: UsageUpdate }, (_req, _res, { body }): UsageRecorded => {
    usage.update(body);
    return { status: 'updated' };
  });

  routes.on('GET /api/usage', { access: 'content.manage', query: UsageListQuery }, (_req, _res, { query }): UsageList => ({
    ...usage.recent(query.limit, query.before),
    counts: usage.counts(),
  }));

  // "the summary says what is kept": the retention policy rides along with the counts.
  routes.on('GET /api/usage/summary', { access: 'content.read' }, (): UsageSummary => ({ ...usage.counts(), ...(retention ? { retention } : {}) }));

  // The usage page's charts: aggregates only (no report's fields), so content.read like the summary.
  routes.on('GET /api/usage/stats', { access: 'content.read', query: UsageStatsQuery }, (_req, _res, { query }): UsageStats => ({
    ...stats(clock.now(), query.days),
    ...(retention ? { retention } : {}),
  }));
}
