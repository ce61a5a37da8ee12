import * as z from 'zod';
import type { AppContext } from '../context.js';
import type { Health } from '../contract/common.js';
import type { TaskList } from '../contract/tasks.js';
import type { RouteTable } from '../http/routes.js';
import { VERSION } from '../version.js';

export function registerHealthRoutes(routes: RouteTable, { db, tasks }: AppContext): void {
  const ping = db.prepare('SELECT 1');
  // For the API document only: the answer's shape (server/contract's Health).
  const HealthDoc = z.lazy(() => z.object({ status: z.literal('ok'), version: z.string() }));
  routes.get('/api/health', { access: 'public', documentedResponse: { status: 200, schema: HealthDoc } }, (): Health => {
    ping.get();
    return { status: 'ok', version: VERSION };
  });

  // Not in the public health answer (PRODUCT.md fixes it at status and version): which background
  // work runs and how often it fails is a diagnostic, as logs are. Failure texts stay in the log.
  routes.get(
    '/api/health/tasks',
    { access: 'diagnostics.read', documentedResponse: { status: 200, description: '`{tasks: [{name, interval_ms, running, runs, failures, skipped, last_started_at, last_ended_at, last_failed_at, next_run_at}]}`: the background tasks' } },
    (): TaskList => ({ tasks: tasks.status() }),
  );
}
