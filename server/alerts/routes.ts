import type { RouteTable } from '../http/routes.js';
import { AlertsQuery, RuleUpdate } from './schema.js';
import type { AlertService } from './service.js';

const doc = (status: number, description: string) => ({ status, description });

export function registerAlertRoutes(routes: RouteTable, alerts: AlertService): void {
  routes.get('/api/alerts/rules', { access: 'fleet.read', documentedResponse: doc(200, 'The built-in rules with their settings') }, () => alerts.rules());

  routes.put('/api/alerts/rules/:rule', { access: 'settings.manage', body: RuleUpdate, documentedResponse: doc(200, 'The rule with its new settings') }, (req, res) =>
    alerts.updateRule(req.params.rule ?? '', req.body),
  );

  routes.get('/api/alerts', { access: 'fleet.read', query: AlertsQuery, documentedResponse: doc(200, 'Alerts, firing first, then newest first') }, (req) => {
    const q = req.query as { status?: 'firing' | 'resolved'; limit?: number };
    return alerts.list(q.status, q.limit ?? 100);
  });
}
