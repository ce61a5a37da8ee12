import { notFound } from '../errors.js';
import type { RouteTable } from '../http/routes.js';
import type { FleetGaugeSources } from './prometheus.js';
import { GuestMetricsQuery, HostMetricsQuery } from '../contract/inputs/metrics.js';
import type { MetricsService } from './service.js';

export interface MetricRouteDeps {
  metrics: MetricsService;
  /** The host's name when it exists (deleted hosts too: their history stays readable). */
  hostName(id: number): string | undefined;
  gauges: FleetGaugeSources;
}

export function registerMetricRoutes(routes: RouteTable, { metrics, hostName, gauges }: MetricRouteDeps): void {
  const hostOf = (id: number) => {
    if (hostName(id) === undefined) throw notFound('host not found');
    return id;
  };

  routes.on('GET /api/hosts/:id/metrics', { access: 'fleet.read', query: HostMetricsQuery }, (_req, _res, { params, query }) => metrics.hostSeries(hostOf(params.id), query));

  routes.on('GET /api/hosts/:id/metrics/latest', { access: 'fleet.read' }, (_req, res, { params }) => {
    const latest = metrics.latest(hostOf(params.id));
    if (!latest) {
      res.status(204).end();
      return;
    }
    return latest;
  });

  routes.on('GET /api/hosts/:id/guests/:vmid/metrics', { access: 'fleet.read', query: GuestMetricsQuery }, (_req, _res, { params, query }) =>
    metrics.guestSeries(hostOf(params.id), params.vmid, query),
  );

  // "for a personal API token with fleet.read": a scraper has no browser session to offer.
  routes.on('GET /metrics', { access: 'fleet.read', credentials: ['token'] }, async (_req, res) => {
    // prom-client is loaded on the first scrape: a server nobody scrapes does not hold it in memory.
    const { scrape } = await import('./prometheus.js');
    const { contentType, text } = await scrape(gauges, metrics.latest);
    res.type(contentType).send(text);
  });
}
