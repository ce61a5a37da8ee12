import type { AppContext } from '../context.js';
import type { RouteTable } from '../http/routes.js';
import { BulkEdit, InstanceInput, InstanceUpdate } from '../contract/inputs/registry.js';
import { InstanceAtQuery, InstanceListQuery } from './schema.js';
import type { InstanceService } from './service.js';

export function registerRegistryRoutes(routes: RouteTable, _ctx: AppContext, instances: InstanceService): void {
  routes.on('GET /api/instances', { access: 'fleet.read', query: InstanceListQuery }, (_req, _res, { query }) => instances.list(query));

  routes.on('GET /api/instances/stacks', { access: 'fleet.read' }, () => instances.stacks());

  routes.on('GET /api/instances/:vmid', { access: 'fleet.read', query: InstanceAtQuery }, (_req, _res, { params, query }) => instances.detail(params.vmid, query.at));

  routes.on('GET /api/instances/:vmid/history', { access: 'fleet.read' }, (_req, _res, { params }) => instances.history(params.vmid));

  routes.on('POST /api/instances', { access: 'fleet.operate', body: InstanceInput }, (_req, _res, { body }) => instances.createValid(body));

  routes.on('POST /api/instances/bulk', { access: 'fleet.operate', body: BulkEdit }, (_req, _res, { body }) => instances.bulkEdit(body));

  // The fields given are checked here; merged over the stored instance, the whole is checked again.
  routes.on('PUT /api/instances/:vmid', { access: 'fleet.operate', body: InstanceUpdate }, (_req, _res, { params, body }) => instances.update(params.vmid, body).instance);

  routes.on('DELETE /api/instances/:vmid', { access: 'fleet.operate' }, (_req, res, { params }) => {
    instances.remove(params.vmid);
    res.end();
  });
}
