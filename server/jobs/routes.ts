import type { RouteTable } from '../http/routes.js';
import { JobUpdate, RunQuery } from '../contract/inputs/jobs.js';
import type { JobService } from './service.js';

export function registerJobRoutes(routes: RouteTable, jobs: JobService): void {
  routes.on('GET /api/jobs', { access: 'fleet.read' }, () => jobs.list());
  routes.on('GET /api/jobs/:id', { access: 'fleet.read' }, (_req, _res, { params }) => jobs.get(params.id));
  // The id is checked before the body, so `PUT /api/jobs/abc` is "invalid id" whatever it carries.
  routes.on('PUT /api/jobs/:id', { access: 'settings.manage', body: JobUpdate }, (req, res, { params, body }) => jobs.update(params.id, body).job);
  routes.on('POST /api/jobs/:id/run', { access: 'fleet.operate', query: RunQuery }, (req, res, { params, query }) =>
    query.dry_run === 'true' ? jobs.dryRun(params.id) : jobs.runNow(params.id),
  );
}
