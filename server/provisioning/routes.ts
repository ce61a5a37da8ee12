import type { RouteTable } from '../http/routes.js';
import { CloudConfigInput, ServerKeyInput } from '../contract/inputs/provisioning.js';
import type { CloudConfigs } from './cloud-configs.js';
import type { ServerKeys } from './server-keys.js';

/**
 * Server keys (administrators save and read them; operators list them to launch with) and cloud
 * configs (everyone lists them; operators and administrators read bodies and write).
 */
export function registerProvisioningRoutes(routes: RouteTable, keys: ServerKeys, configs: CloudConfigs): void {
  routes.on('GET /api/server-keys', { access: 'fleet.operate' }, () => keys.list());
  routes.on('POST /api/server-keys', { access: 'settings.manage', body: ServerKeyInput }, (_req, _res, { body }) => keys.create(body));
  routes.on('GET /api/server-keys/:id', { access: 'settings.manage' }, (_req, _res, { params }) => keys.read(params.id));
  routes.on('DELETE /api/server-keys/:id', { access: 'settings.manage' }, (_req, res, { params }) => {
    keys.remove(params.id);
    res.status(204).end();
  });

  routes.on('GET /api/cloud-configs', { access: 'content.read' }, () => configs.list());
  routes.on('POST /api/cloud-configs', { access: 'content.manage', body: CloudConfigInput }, (_req, _res, { body }) => configs.create(body));
  routes.on('GET /api/cloud-configs/:id', { access: 'content.manage' }, (_req, _res, { params }) => configs.read(params.id));
  routes.on('PUT /api/cloud-configs/:id', { access: 'content.manage', body: CloudConfigInput }, (_req, _res, { params, body }) => configs.update(params.id, body));
  routes.on('DELETE /api/cloud-configs/:id', { access: 'content.manage' }, (_req, res, { params }) => {
    configs.remove(params.id);
    res.status(204).end();
  });
}
