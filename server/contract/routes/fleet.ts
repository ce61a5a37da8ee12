import { answer, input, route } from '../route.js';
import type { FleetHealth, GuestBackup, Policy } from '../fleet.js';
import type { BackupReport, FleetHealthParams, PoliciesInput } from '../inputs/fleet.js';

/** Fleet health: backups reported by agents, policies, and the checks of every instance against them. */
export const fleetRoutes = {
  'POST /api/agent/backups': route({ body: input<BackupReport>(), answers: [answer(204, "Kept: the host's backup jobs and its guests' newest backups, replacing what it sent before")] }),
  'GET /api/instances/:vmid/backups': route({ ids: ['vmid'], answers: [answer<GuestBackup[]>(200, "The guest's backups as agents reported them, newest first")] }),
  'GET /api/policies': route({ answers: [answer<Policy[]>(200, 'The fleet-health policies')] }),
  'PUT /api/policies': route({ body: input<PoliciesInput>(), answers: [answer<Policy[]>(200, 'The policies as saved (the whole list replaced)')] }),
  'GET /api/fleet-health': route({
    query: input<FleetHealthParams>(),
    answers: [answer<FleetHealth>(200, 'Every instance a policy covers, each check passing, failing or unknown with its reason, failing first')],
  }),
} as const;
