import type { RequestHandler } from 'express';
import { badRequest, tooManyRequests, unsupportedMediaType } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam } from '../http/validate.js';
import type { RetentionPolicy, UsageList, UsageRecorded, UsageStats, UsageSummary } from '../contract/usage.js';
import { DEFAULT_PAGE, MAX_PAGE, UsageStart, UsageUpdate } from './schema.js';
import type { UsageService } from './service.js';
import { DEFAULT_STATS_DAYS, MAX_STATS_DAYS, type createUsageStats } from './stats.js';
import type { Clock } from '../time.js';
import { fixedWindowThrottle } from './throttle.js';
import * as z from 'zod';

// For the API document only: the handlers parse these themselves (400 `invalid limit`, say).
const UsageListQueryDoc = z.lazy(() =>
  z.object({
    limit: z.coerce.number().int().min(1).max(MAX_PAGE).optional().describe(`Reports per page (default ${DEFAULT_PAGE})`),
    before: z.coerce.number().int().optional().describe('Only reports with a smaller id (the next page)'),
  }),
);
const UsageStatsQueryDoc = z.lazy(() =>
  z.object({
    days: z.coerce.number().int().min(1).max(MAX_STATS_DAYS).optional().describe(`Days the charts cover (default ${DEFAULT_STATS_DAYS})`),
  }),
);

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

  routes.post('/api/usage/upload', { ...ingest, body: UsageStart }, (req, res): UsageRecorded => {
    usage.start(req.body);
    res.status(201);
    return { status: 'recorded' };
  });

  routes.post('/api/usage/upload/updatestatus', { ...ingest, body: UsageUpdate }, (req): UsageRecorded => {
    usage.update(req.body);
    return { status: 'updated' };
  });

  routes.get('/api/usage', { access: 'content.manage', documentedQuery: UsageListQueryDoc }, (req): UsageList => {
    const query = req.query as Record<string, string | undefined>;
    const limit = query.limit === undefined ? DEFAULT_PAGE : parseIntegerParam(query.limit, 'invalid limit');
    if (limit < 1 || limit > MAX_PAGE) throw badRequest('invalid limit');
    const before = query.before === undefined ? undefined : parseIntegerParam(query.before, 'invalid before');
    return { ...usage.recent(limit, before), counts: usage.counts() };
  });

  // "the summary says what is kept": the retention policy rides along with the counts.
  routes.get('/api/usage/summary', { access: 'content.read' }, (): UsageSummary => ({ ...usage.counts(), ...(retention ? { retention } : {}) }));

  // The usage page's charts: aggregates only (no report's fields), so content.read like the summary.
  routes.get('/api/usage/stats', { access: 'content.read', documentedQuery: UsageStatsQueryDoc }, (req): UsageStats => {
    const raw = (req.query as Record<string, string | undefined>).days;
    const days = raw === undefined ? DEFAULT_STATS_DAYS : parseIntegerParam(raw, 'invalid days');
    if (days < 1 || days > MAX_STATS_DAYS) throw badRequest('invalid days');
    return { ...stats(clock.now(), days), ...(retention ? { retention } : {}) };
  });
}
