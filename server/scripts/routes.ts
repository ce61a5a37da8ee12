import type { RouteTable } from '../http/routes.js';
import { AgainstQuery } from '../contract/inputs/operations.js';
import { ScriptInput } from '../contract/inputs/scripts.js';
import type { Scripts } from './service.js';

/** Scripts: everyone with `content.read` lists them; `content.manage` reads bodies and writes. */
export function registerScriptRoutes(routes: RouteTable, scripts: Scripts): void {
  routes.on('GET /api/scripts', { access: 'content.read' }, () => scripts.list());
  routes.on('POST /api/scripts', { access: 'content.manage', body: ScriptInput }, (_req, _res, { body }) => scripts.create(body));
  routes.on('GET /api/scripts/:id', { access: 'content.manage' }, (_req, _res, { params }) => scripts.read(params.id));
  routes.on('PUT /api/scripts/:id', { access: 'content.manage', body: ScriptInput }, (_req, _res, { params, body }) => scripts.update(params.id, body));
  routes.on('DELETE /api/scripts/:id', { access: 'content.manage' }, (_req, res, { params }) => {
    scripts.remove(params.id);
    res.status(204).end();
  });
  routes.on('GET /api/scripts/:id/versions', { access: 'content.manage' }, (_req, _res, { params }) => scripts.versions(params.id));
  // Read before the type is set: a 404 is still answered as JSON.
  routes.on('GET /api/scripts/:id/versions/:v', { access: 'content.manage' }, (_req, res, { params }) => {
    const body = scripts.versionBody(params.id, params.v);
    res.type('text/plain').send(body);
  });
  routes.on('GET /api/scripts/:id/versions/:v/diff', { access: 'content.manage', query: AgainstQuery }, async (_req, res, { params, query }) => {
    const diff = await scripts.diff(params.id, params.v, query.against);
    res.type('text/plain').send(diff);
  });
}
