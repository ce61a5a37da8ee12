import * as z from 'zod';
import type { AppContext } from '../context.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam } from '../http/validate.js';
import { InstanceInput, parseListQuery } from './schema.js';
import type { InstanceService } from './service.js';

const vmidParam = (raw: string | undefined) => parseIntegerParam(raw, 'invalid vmid');

export function registerRegistryRoutes(routes: RouteTable, _ctx: AppContext, instances: InstanceService): void {
  routes.get('/api/instances', { access: 'fleet.read' }, (req) => instances.list(parseListQuery(req.query)));

  routes.get('/api/instances/stacks', { access: 'fleet.read' }, () => instances.stacks());

  routes.get('/api/instances/:vmid', { access: 'fleet.read' }, (req) => instances.get(vmidParam(req.params.vmid)));

  routes.get('/api/instances/:vmid/history', { access: 'fleet.read' }, (req) =>
    instances.history(vmidParam(req.params.vmid)),
  );

  routes.post('/api/instances', { access: 'fleet.operate', status: 201, documentedBody: InstanceInput }, (req) => instances.create(req.body));

  routes.put('/api/instances/:vmid', { access: 'fleet.operate', documentedBody: z.lazy(() => InstanceInput.unwrap().partial()) }, (req) =>
    instances.update(vmidParam(req.params.vmid), req.body).instance,
  );

  routes.delete('/api/instances/:vmid', { access: 'fleet.operate', status: 204 }, (req, res) => {
    instances.remove(vmidParam(req.params.vmid));
    res.end();
  });
}
