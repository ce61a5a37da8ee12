import * as z from 'zod';
import { BackupReportBody, FleetHealthQuery, MAX_BACKUPS, PoliciesBody, type BackupReport } from '../contract/inputs/fleet.js';
import { validationFailed } from '../errors.js';
import { agentCredentialOf } from '../http/locals.js';
import type { RouteTable } from '../http/routes.js';
import { fieldErrors } from '../http/validate.js';
import type { FleetHealthService } from './service.js';

const PER_TURN = 500;

/**
 * BackupReportBody's parse, 500 backups per turn of the event loop (a shared storage of a big
 * cluster lists 25,000), with the same answers: a 400 naming each bad field (`backups.3.volid`).
 */
async function parseReport(value: unknown): Promise<BackupReport> {
  const shape = BackupReportBody.unwrap().shape;
  const envelope = BackupReportBody.unwrap()
    .extend({ backups: z.array(z.unknown(), { error: 'must be a list of backups' }).max(MAX_BACKUPS, { error: `must hold at most ${MAX_BACKUPS} backups` }) })
    .safeParse(value);
  const issues = envelope.success ? [] : [...envelope.error.issues];
  const raw = envelope.success ? envelope.data.backups : [];
  const backups: BackupReport['backups'] = [];
  for (let start = 0; start < raw.length; start += PER_TURN) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    raw.slice(start, start + PER_TURN).forEach((backup, i) => {
      const parsed = shape.backups.element.safeParse(backup);
      if (parsed.success) backups.push(parsed.data);
      else issues.push(...parsed.error.issues.map((issue) => ({ ...issue, path: ['backups', start + i, ...issue.path] })));
    });
  }
  if (issues.length || !envelope.success) throw validationFailed(fieldErrors(new z.ZodError(issues)));
  return { jobs: envelope.data.jobs, backups };
}

export function registerFleetRoutes(routes: RouteTable, fleet: FleetHealthService): void {
  routes.on('POST /api/agent/backups', { access: 'machine', credentials: ['host'], body: BackupReportBody, parse: parseReport, bodyLimit: '8mb' }, (req, res, { body }) => {
    fleet.report(agentCredentialOf(res, 'host').id, body);
    res.status(204).end();
  });

  routes.on('GET /api/instances/:vmid/backups', { access: 'fleet.read' }, (req, res, { params }) => fleet.backupsOf(params.vmid));

  routes.on('GET /api/policies', { access: 'fleet.read' }, () => fleet.policies());

  routes.on('PUT /api/policies', { access: 'settings.manage', body: PoliciesBody }, (req, res, { body }) => fleet.putPolicies(body));

  // The registry, when not held (after an import), is read a page per turn first.
  routes.on('GET /api/fleet-health', { access: 'fleet.read', query: FleetHealthQuery }, async (req, res, { query }) => {
    await fleet.ready();
    return fleet.health(query);
  });
}
