import { answer, input, route } from '../route.js';
import type { Health } from '../common.js';
import type { EventsQuery } from '../inputs/events.js';
import type { PageQueryInput } from '../inputs/page.js';
import type { TaskList } from '../tasks.js';
import type { TelemetryAccepted, TelemetryEvent } from '../telemetry.js';
import type { UsageStart, UsageStatsQuery, UsageUpdate } from '../inputs/usage.js';
import type { UsageList, UsageRecorded, UsageStats, UsageSummary } from '../usage.js';

/** Health, the live event stream, the API document, usage reports, telemetry and the dashboard's files. */
export const systemRoutes = {
  'GET /api/health': route({ answers: [answer<Health>(200, 'The server is up: `{status: "ok", version}`')] }),
  'GET /api/health/tasks': route({
    answers: [answer<TaskList>(200, '`{tasks: [{name, interval_ms, running, runs, failures, skipped, last_started_at, last_ended_at, last_failed_at, next_run_at}]}`: the background tasks')],
  }),
  'GET /api/events': route({
    query: input<EventsQuery>(),
    answers: [
      answer(
        200,
        'Server-Sent Events: `: connected`, a comment every 15 s, events with ids, `reset` when missed events are gone, and `revoked` with a reason just before the stream ends. At most 5 streams per session or per API token and 10 per account (429); 1,000 in all, the last 50 for administrators (503).',
        'text/event-stream',
      ),
    ],
  }),
  'GET /api/openapi.json': route({ answers: [answer(200, 'This document', 'application/json')] }),

  'POST /api/usage/upload': route({ body: input<UsageStart>(), answers: [answer<UsageRecorded>(201, 'Recorded')] }),
  'POST /api/usage/upload/updatestatus': route({ body: input<UsageUpdate>(), answers: [answer<UsageRecorded>(200, 'Updated')] }),
  'GET /api/usage': route({ query: input<PageQueryInput>(), answers: [answer<UsageList>(200, 'Usage reports, newest first, with the counts')] }),
  'GET /api/usage/summary': route({ answers: [answer<UsageSummary>(200, 'The counts and the retention policy')] }),
  'GET /api/usage/stats': route({ query: input<UsageStatsQuery>(), answers: [answer<UsageStats>(200, 'Aggregates for the usage charts')] }),

  'POST /api/telemetry': route({ answers: [answer<TelemetryAccepted>(202, 'Accepted')] }),
  'GET /api/telemetry': route({ query: input<PageQueryInput>(), answers: [answer<TelemetryEvent[]>(200, 'Telemetry events, newest first')] }),

  'GET /assets/:file': route({ answers: [answer(200, "A file of the dashboard's bundle")] }),
  'GET /{*page}': route({ answers: [answer(200, 'The dashboard', 'text/html')] }),
} as const;
