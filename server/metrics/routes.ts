import * as z from 'zod';
import { notFound } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam } from '../http/validate.js';
import type { FleetGaugeSources } from './prometheus.js';
import { GuestMetricsQuery, HostMetricsQuery, type MetricsQuery } from './schema.js';
import type { MetricsService } from './service.js';

const doc = (status: number, description: string, contentType?: string) => ({ status, description, ...(contentType ? { contentType } : {}) });

export interface MetricRouteDeps {
  metrics: MetricsService;
  /** The host's name when it exists (deleted hosts too: their history stays readable). */
  hostName(id: number): string | undefined;
  gauges: FleetGaugeSources;
}

export function registerMetricRoutes(routes: RouteTable, { metrics, hostName, gauges }: MetricRouteDeps): void {
  const hostOf = (raw: string | undefined) => {
    const id = parseIntegerParam(raw, 'invalid id');
    if (hostName(id) === undefined) throw notFound('host not found');
    return id;
  };

  routes.get(
    '/api/hosts/:id/metrics',
    { access: 'fleet.read', query: HostMetricsQuery, documentedResponse: doc(200, '`{step_s, from, to, series: {name: [[t, avg, max], …]}}`: the finest resolution with at most 1,500 points') },
    (req) => metrics.hostSeries(hostOf(req.params.id), req.query as unknown as MetricsQuery),
  );

  routes.get('/api/hosts/:id/metrics/latest', { access: 'fleet.read', documentedResponse: doc(200, 'The last heartbeat\'s numbers of the host and each guest (204 before any)') }, (req, res) => {
    const latest = metrics.latest(hostOf(req.params.id));
    if (!latest) {
      res.status(204).end();
      return;
    }
    return latest;
  });

  routes.get(
    '/api/hosts/:id/guests/:vmid/metrics',
    { access: 'fleet.read', query: GuestMetricsQuery, documentedResponse: doc(200, 'A guest\'s series, as the host\'s') },
    (req) => metrics.guestSeries(hostOf(req.params.id), parseIntegerParam(req.params.vmid, 'invalid vmid'), req.query as unknown as MetricsQuery),
  );

  // "for a personal API token with fleet.read": a scraper has no browser session to offer.
  routes.get('/metrics', { access: 'fleet.read', credentials: ['token'], documentedQuery: z.lazy(() => z.object({})), documentedResponse: doc(200, 'Prometheus text format', 'text/plain') }, async (_req, res) => {
    // prom-client is loaded on the first scrape: a server nobody scrapes does not hold it in memory.
    const { scrape } = await import('./prometheus.js');
    const { contentType, text } = await scrape(gauges, metrics.latest);
    res.type(contentType).send(text);
  });
}
