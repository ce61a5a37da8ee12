import type { RouteTable } from '../http/routes.js';
import { CollectionInput } from '../contract/inputs/collections.js';
import type { Collections } from './service.js';

/** Everyone reads collections; operators and administrators write them; what one matches is fleet data. */
export function registerCollectionRoutes(routes: RouteTable, collections: Collections): void {
  routes.on('GET /api/collections', { access: 'content.read' }, () => collections.list());
  routes.on('POST /api/collections', { access: 'content.manage', body: CollectionInput }, (_req, _res, { body }) => collections.create(body));
  routes.on('GET /api/collections/:id', { access: 'content.read' }, (_req, _res, { params }) => collections.read(params.id));
  routes.on('PUT /api/collections/:id', { access: 'content.manage', body: CollectionInput }, (_req, _res, { params, body }) => collections.update(params.id, body));
  routes.on('DELETE /api/collections/:id', { access: 'content.manage' }, (_req, res, { params }) => {
    collections.remove(params.id);
    res.status(204).end();
  });
  routes.on('GET /api/collections/:id/instances', { access: 'fleet.read' }, (_req, _res, { params }) => collections.instancesOf(params.id));
}
