import type { AppContext } from '../context.js';
import type { RouteTable } from '../http/routes.js';
import { VERSION } from '../version.js';

export function registerHealthRoutes(routes: RouteTable, { db }: AppContext): void {
  const ping = db.prepare('SELECT 1');
  routes.get('/api/health', { access: 'public' }, () => {
    ping.get();
    return { status: 'ok', version: VERSION };
  });
}
