import type { RouteTable } from '../http/routes.js';
import { AlertsQuery, RuleUpdate } from '../contract/inputs/alerts.js';
import type { AlertService } from './service.js';

export function registerAlertRoutes(routes: RouteTable, alerts: AlertService): void {
  routes.on('GET /api/alerts/rules', { access: 'fleet.read' }, () => alerts.rules());

  routes.on('PUT /api/alerts/rules/:rule', { access: 'settings.manage', body: RuleUpdate }, (req, res, { params, body }) => alerts.updateRule(params.rule, body));

  routes.on('GET /api/alerts', { access: 'fleet.read', query: AlertsQuery }, (_req, _res, { query }) => alerts.list(query.status, query.limit));
}
