import { answer, input, route } from '../route.js';
import type { Collection } from '../collections.js';
import type { CollectionInput } from '../inputs/collections.js';
import type { PlacedInstance } from '../registry.js';

/** Collections: saved filters over the instances (PRODUCT.md "Collections, scripts, campaigns and release channels"). */
export const collectionRoutes = {
  'GET /api/collections': route({ answers: [answer<Collection[]>(200, 'The collections by name, each with `count`: the instances it matches now')] }),
  'POST /api/collections': route({ body: input<CollectionInput>(), answers: [answer<Collection>(201, 'The collection (409 when its name is taken, whatever the case)')] }),
  'GET /api/collections/:id': route({ ids: ['id'], answers: [answer<Collection>(200, 'The collection')] }),
  'PUT /api/collections/:id': route({ ids: ['id'], body: input<CollectionInput>(), answers: [answer<Collection>(200, 'The collection as changed')] }),
  'DELETE /api/collections/:id': route({ ids: ['id'], answers: [answer(204, 'Deleted')] }),
  'GET /api/collections/:id/instances': route({ ids: ['id'], answers: [answer<PlacedInstance[]>(200, 'The instances the collection matches now, by name')] }),
} as const;
