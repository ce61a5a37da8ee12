import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam, parseWith } from '../http/validate.js';
import { JobUpdate } from './schema.js';
import type { JobService } from './service.js';

const idParam = (raw: string | undefined) => parseIntegerParam(raw, 'invalid id');

export function registerJobRoutes(routes: RouteTable, jobs: JobService): void {
  routes.get('/api/jobs', { access: 'fleet.read' }, () => jobs.list());

  routes.get('/api/jobs/:id', { access: 'fleet.read' }, (req) => jobs.get(idParam(req.params.id)));

  // The id is checked before the body, so `PUT /api/jobs/abc` is "invalid id" whatever it carries.
  routes.put('/api/jobs/:id', { access: 'settings.manage', documentedBody: JobUpdate }, (req, res) => {
    const id = idParam(req.params.id);
    const body = parseWith(JobUpdate, req.body ?? {});
    const job = jobs.update(id, body);
    // Names of what was sent, never values (config holds secrets).
    const fields = [
      ...(body.enabled === undefined ? [] : ['enabled']),
      ...(body.schedule === undefined ? [] : ['schedule']),
      ...Object.keys(body.config ?? {}).map((field) => `config.${field}`),
    ];
    res.locals.auditDetail = { fields };
    return job;
  });

  routes.post('/api/jobs/:id/run', { access: 'fleet.operate' }, (req) => jobs.runNow(idParam(req.params.id)));
}
