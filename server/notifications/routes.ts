import type { RouteTable } from '../http/routes.js';
import { ChannelInput, DeliveriesQuery } from '../contract/inputs/notifications.js';
import type { NotificationService } from './service.js';

export function registerNotificationRoutes(routes: RouteTable, notifications: NotificationService): void {
  routes.on('GET /api/notifications/channels', { access: 'settings.manage' }, () => notifications.list());

  routes.on('POST /api/notifications/channels', { access: 'settings.manage', body: ChannelInput }, (req, res, { body }) => {
    res.status(201);
    return notifications.create(body);
  });

  routes.on('PUT /api/notifications/channels/:id', { access: 'settings.manage', body: ChannelInput }, (req, res, { params, body }) =>
    notifications.update(params.id, body),
  );

  routes.on('DELETE /api/notifications/channels/:id', { access: 'settings.manage' }, (req, res, { params }) => {
    notifications.remove(params.id);
    res.status(204).end();
  });

  routes.on('POST /api/notifications/channels/:id/test', { access: 'settings.manage' }, (req, res, { params }) => notifications.test(params.id));

  routes.on('GET /api/notifications/deliveries', { access: 'settings.manage', query: DeliveriesQuery }, (_req, _res, { query }) =>
    notifications.deliveries(query.limit, query.channel_id),
  );
}
