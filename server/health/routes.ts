import * as z from 'zod';
import type { AppContext } from '../context.js';
import type { Health } from '../contract/common.js';
import type { RouteTable } from '../http/routes.js';
import { VERSION } from '../version.js';

export function registerHealthRoutes(routes: RouteTable, { db }: AppContext): void {
  const ping = db.prepare('SELECT 1');
  // For the API document only: the answer's shape (server/contract's Health).
  const HealthDoc = z.lazy(() => z.object({ status: z.literal('ok'), version: z.string() }));
  routes.get('/api/health', { access: 'public', documentedResponse: { status: 200, schema: HealthDoc } }, (): Health => {
    ping.get();
    return { status: 'ok', version: VERSION };
  });
}
