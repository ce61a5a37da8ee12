import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam, parseWith } from '../http/validate.js';
import { ChannelInput, DeliveriesQuery } from './schema.js';
import type { NotificationService } from './service.js';

const idParam = (raw: string | undefined) => parseIntegerParam(raw, 'invalid id');
const doc = (status: number, description: string) => ({ status, description });

export function registerNotificationRoutes(routes: RouteTable, notifications: NotificationService): void {
  routes.get('/api/notifications/channels', { access: 'settings.manage', documentedResponse: doc(200, 'Channels, secrets as **REDACTED**') }, () => notifications.list());

  routes.post('/api/notifications/channels', { access: 'settings.manage', body: ChannelInput, documentedResponse: doc(201, 'The channel') }, (req, res) => {
    res.status(201);
    return notifications.create(req.body);
  });

  routes.put('/api/notifications/channels/:id', { access: 'settings.manage', documentedBody: ChannelInput, documentedResponse: doc(200, 'The channel') }, (req, res) => {
    // The id is checked before the body, as for jobs.
    const id = idParam(req.params.id);
    return notifications.update(id, parseWith(ChannelInput, req.body ?? {}));
  });

  routes.delete('/api/notifications/channels/:id', { access: 'settings.manage', documentedResponse: doc(204, 'Removed') }, (req, res) => {
    notifications.remove(idParam(req.params.id));
    res.status(204).end();
  });

  routes.post('/api/notifications/channels/:id/test', { access: 'settings.manage', documentedResponse: doc(200, '`{ok, error, delivery_id}`: the outcome of one attempt') }, (req, res) =>
    notifications.test(idParam(req.params.id)),
  );

  routes.get('/api/notifications/deliveries', { access: 'settings.manage', query: DeliveriesQuery, documentedResponse: doc(200, 'Deliveries, newest first') }, (req) => {
    const q = req.query as { limit?: number; channel_id?: number };
    return notifications.deliveries(q.limit ?? 100, q.channel_id);
  });
}
