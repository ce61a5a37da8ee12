import * as z from 'zod';
import type { AppContext } from '../context.js';
import type { Health } from '../contract/common.js';
import type { TaskList } from '../contract/tasks.js';
import type { RouteTable } from '../http/routes.js';
import { VERSION } from '../version.js';

export function registerHealthRoutes(routes: RouteTable, { db, tasks }: AppContext): void {
  const ping = db.prepare('SELECT 1');
  // The answer's shape for the API document, held to server/contract's Health.
  const HealthAnswer = z.lazy(() => z.object({ status: z.literal('ok'), version: z.string() }));
  routes.on('GET /api/health', { access: 'public', answer: HealthAnswer }, (): Health => {
    ping.get();
    return { status: 'ok', version: VERSION };
  });

  // Not in the public health answer (PRODUCT.md fixes it at status and version): which background
  // work runs and how often it fails is a diagnostic, as logs are. Failure texts stay in the log.
  routes.on('GET /api/health/tasks', { access: 'diagnostics.read' }, (): TaskList => ({ tasks: tasks.status() }));
}
