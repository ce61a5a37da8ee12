import type { RouteTable } from '../http/routes.js';
import { VERSION } from '../version.js';
import { buildOpenApiDocument } from './document.js';

/** `GET /api/openapi.json` (public): built from the route table when asked, so every route registered by then is in it. */
export function registerOpenApiRoutes(routes: RouteTable): void {
  let cached: { count: number; body: string } | undefined;
  routes.on('GET /api/openapi.json', { access: 'public' }, (_req, res) => {
    if (cached?.count !== routes.records.length) {
      cached = { count: routes.records.length, body: JSON.stringify(buildOpenApiDocument(routes.records, VERSION)) };
    }
    res.type('application/json').set('Cache-Control', 'no-cache').send(cached.body);
  });
}
