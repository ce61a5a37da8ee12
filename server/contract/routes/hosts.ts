import { answer, input, route } from '../route.js';
import type { CreatedEnrollmentToken, DriftResult, EnrollAnswer, EnrollmentToken, HeartbeatAnswer, HostDetail, HostRemoval, HostSummary, Manifest } from '../hosts.js';
import type { DriftApply, EnrollmentTokenCreate, EnrollRequest, HeartbeatRequest, HostDelete, HostPatch, UpgradeRequest } from '../inputs/hosts.js';
import type { MetricsQuery } from '../inputs/metrics.js';
import type { MetricsAnswer, HostMetricsLatest } from '../metrics.js';
import type { Against, GuestActionRequest, GuestConfigUpload, MaintenancePolicyInput, OperationListQuery, OperationResult, Wait } from '../inputs/operations.js';
import type { DeployInput } from '../inputs/provisioning.js';
import type { CommandsAnswer, GuestConfigVersion, MaintenancePolicy, Operation, OperationAccepted } from '../operations.js';

/** Hosts, their agents, operations, guest configs, maintenance, metrics and the agent's release files. */
export const hostRoutes = {
  'POST /api/hosts/enrollment-tokens': route({
    body: input<EnrollmentTokenCreate>(),
    answers: [answer<CreatedEnrollmentToken>(201, 'The enrollment token (`hfe_`, shown once), its install command (run as root), and `install_notes`: why that command cannot work from another machine yet (plain HTTP, a loopback address), empty when it can')],
  }),
  'GET /api/hosts/enrollment-tokens': route({ answers: [answer<EnrollmentToken[]>(200, 'Enrollment tokens, without their secrets')] }),
  'DELETE /api/hosts/enrollment-tokens/:id': route({ ids: ['id'], answers: [answer(204, 'Revoked')] }),
  'GET /api/hosts': route({ answers: [answer<HostSummary[]>(200, 'Every host with its status, last heartbeat, agent, guest and drift counts')] }),
  'GET /api/hosts/:id': route({ ids: ['id'], answers: [answer<HostDetail>(200, 'The host with its guests, drift and removal state')] }),
  'PATCH /api/hosts/:id': route({
    ids: ['id'],
    body: input<HostPatch>(),
    answers: [answer<HostDetail>(200, 'The updated host: registry sync, the agent\'s release channel and pin (a version this server ships), its collectors; a pending upgrade the new channel or pin refuses is called off')],
  }),
  'DELETE /api/hosts/:id': route({
    ids: ['id'],
    query: input<HostDelete>(),
    answers: [answer<HostRemoval>(202, 'Removal started: the uninstall goes out at the next heartbeat'), answer<HostRemoval>(200, 'Removed by force')],
  }),
  'POST /api/hosts/:id/revoke-token': route({ ids: ['id'], answers: [answer(204, 'Host token revoked')] }),
  'POST /api/hosts/:id/upgrade': route({ ids: ['id'], body: input<UpgradeRequest>(), answers: [answer<HostDetail>(202, 'Upgrade requested; offered at the next heartbeat')] }),
  'POST /api/hosts/:id/drift/apply': route({ ids: ['id'], body: input<DriftApply>(), answers: [answer<DriftResult>(200, 'What was applied and what was skipped')] }),

  'POST /api/agent/enroll': route({ body: input<EnrollRequest>(), answers: [answer<EnrollAnswer>(201, 'The host id, its host token (`hfh_`, shown once) and the heartbeat interval')] }),
  'POST /api/agent/heartbeat': route({
    body: input<HeartbeatRequest>(),
    answers: [answer<HeartbeatAnswer>(200, 'Commands for the agent (uninstall, upgrade, and guest actions and log requests the command poll did not take), and which collectors it runs')],
  }),
  'POST /api/agent/receipts/:operation_id': route({ answers: [answer(204, 'Removal confirmed')] }),

  'POST /api/hosts/:id/guests/:vmid/actions': route({ ids: ['id', 'vmid'], body: input<GuestActionRequest>(), answers: [answer<OperationAccepted>(202, 'The operation, pending until the agent fetches it')] }),
  'POST /api/hosts/:id/deploy': route({
    ids: ['id'],
    body: input<DeployInput>(),
    answers: [
      answer<OperationAccepted>(
        202,
        'A `deploy` operation; the new guest\'s registry instance exists from now on and is removed again if the deploy fails (409 `{"error":"vmid already exists"}`, or the host is offline)',
      ),
    ],
  }),
  'GET /api/operations': route({ query: input<OperationListQuery>(), answers: [answer<Operation[]>(200, 'Operations, newest first')] }),
  'GET /api/operations/:id': route({ answers: [answer<Operation>(200, 'The operation')] }),
  'DELETE /api/operations/:id': route({ answers: [answer(204, 'Cancelled (only a pending operation)')] }),
  'POST /api/hosts/:id/logs': route({ ids: ['id'], answers: [answer<OperationAccepted>(202, 'A logs operation: the agent answers with the last 200 lines of its journal')] }),
  'GET /api/hosts/:id/guests/:vmid/configs': route({ ids: ['id', 'vmid'], answers: [answer<GuestConfigVersion[]>(200, 'The kept config versions of the guest, newest first')] }),
  'GET /api/hosts/:id/guests/:vmid/configs/:cid': route({ ids: ['id', 'vmid', 'cid'], answers: [answer(200, 'The config text', 'text/plain')] }),
  'GET /api/hosts/:id/guests/:vmid/configs/:cid/diff': route({
    ids: ['id', 'vmid', 'cid'],
    query: input<Against>(),
    answers: [answer(200, 'A unified diff', 'text/plain'), answer<{ error: string }>(422, 'The versions differ in more than 1,000 lines: `{"error":"the versions differ too much to show a diff"}`')],
  }),
  'GET /api/hosts/:id/maintenance': route({ ids: ['id'], answers: [answer<MaintenancePolicy>(200, "The host's maintenance policy")] }),
  'PUT /api/hosts/:id/maintenance': route({ ids: ['id'], body: input<MaintenancePolicyInput>(), answers: [answer<MaintenancePolicy>(200, 'The policy as stored')] }),
  'GET /api/agent/commands': route({
    query: input<Wait>(),
    answers: [answer<CommandsAnswer>(200, 'Guest actions and log requests for this host'), answer(204, 'None came within the wait')],
  }),
  'POST /api/agent/operations/:operation_id/result': route({ body: input<OperationResult>(), answers: [answer(204, 'Result taken (a repeat changes nothing)')] }),
  'POST /api/agent/guest-configs': route({ body: input<GuestConfigUpload>(), answers: [answer(204, 'Stored (or the same as the last version)')] }),

  'GET /api/hosts/:id/metrics': route({
    ids: ['id'],
    query: input<MetricsQuery>(),
    answers: [answer<MetricsAnswer>(200, '`{step_s, from, to, series: {name: [[t, avg, max], …]}}`: the finest resolution with at most 1,500 points')],
  }),
  'GET /api/hosts/:id/metrics/latest': route({
    ids: ['id'],
    answers: [answer<HostMetricsLatest>(200, "The last heartbeat's numbers of the host and each guest"), answer(204, 'No heartbeat yet')],
  }),
  'GET /api/hosts/:id/guests/:vmid/metrics': route({ ids: ['id', 'vmid'], query: input<MetricsQuery>(), answers: [answer<MetricsAnswer>(200, "A guest's series, as the host's")] }),
  'GET /metrics': route({ answers: [answer(200, 'Prometheus text format', 'text/plain')] }),

  'GET /api/agent/releases/manifest.json': route({ answers: [answer<Manifest>(200, 'The signed release manifest (its exact bytes are what the signature covers)', 'application/json')] }),
  'GET /api/agent/releases/manifest.json.sig': route({ answers: [answer(200, "The manifest's signature", 'text/plain')] }),
  'GET /api/agent/releases/:version/host-agent.sh': route({ answers: [answer(200, 'The agent script of this version', 'text/x-shellscript')] }),
  'GET /install/agent.sh': route({ answers: [answer(200, 'The agent installer for this server', 'text/x-shellscript')] }),
} as const;
