import type { Request, Response } from 'express';
import { roleHas } from '../contract/access.js';
import type { CommandsAnswer } from '../contract/operations.js';
import { badRequest, forbidden } from '../errors.js';
import type { ZodType } from 'zod';
import { isPlainObject, parseWith } from '../http/validate.js';
import { DeployBody } from '../contract/inputs/provisioning.js';
import { LAUNCH_KEY_ERROR, type Launchables } from './launch.js';
import { agentCredentialOf, userOf } from '../http/locals.js';
import { actorName, currentContext } from '../http/request-context.js';
import type { RouteTable } from '../http/routes.js';
import { AgainstQuery, GuestActionBody, GuestConfigBody, OperationListQuery, OperationResultBody, WaitQuery } from '../contract/inputs/operations.js';
import { MaintenanceBody } from './schema.js';
import type { OperationService } from './service.js';
import { bearerOfKind, sha256 } from '../hosts/tokens.js';

/** "`output` only for diagnostics.read, otherwise absent" */
const readsOutput = (res: Response) => roleHas(userOf(res).role, 'diagnostics.read');

/**
 * Guest control through agents (PRODUCT.md): guest actions, operations, log requests, guest configs
 * and maintenance policies for people; the command poll, results and config uploads for agents.
 */
/**
 * A launch's body (a deploy, or a guest action that `isLaunch` says is a rebuild) is searched for key
 * material before any schema reads it: "a deploy or rebuild body that carries key material → 400,
 * and nothing is stored, queued or logged", however the schema would have read or dropped it.
 */
function readLaunch<T>(launchables: Launchables, schema: ZodType<T>, isLaunch: (raw: unknown) => boolean) {
  return async (raw: unknown): Promise<T> => {
    if (isLaunch(raw) && (await launchables.carriesKeyMaterial(raw))) throw badRequest(LAUNCH_KEY_ERROR);
    return parseWith(schema, raw);
  };
}

/** Who asks, for the operations' `requested_by`; the change log reads the context itself. */
const who = () => ({ actor: actorName(currentContext().actor) });

export function registerOperationRoutes(routes: RouteTable, service: OperationService): void {
  const { operations, guestActions, deploys, guestConfigs, maintenance, launchables } = service;

  routes.on('POST /api/hosts/:id/guests/:vmid/actions',
    { access: 'fleet.operate', body: GuestActionBody, parse: readLaunch(launchables, GuestActionBody, (raw) => isPlainObject(raw) && raw.action === 'rebuild') },
    (req, res, { params, body }) => {
      // Forcing past a maintenance window is an administrator's call ("an operator's force → 403").
      if (body.force === true && !roleHas(userOf(res).role, 'settings.manage')) throw forbidden('only an administrator may force an action');
      const hostId = params.id;
      const vmid = params.vmid;
      res.status(202);
      return guestActions.request(hostId, vmid, body, who());
    },
  );

  routes.on('POST /api/hosts/:id/deploy',
    { access: 'fleet.operate', body: DeployBody, parse: readLaunch(launchables, DeployBody, () => true) },
    (req, res, { params, body }) => {
      res.status(202);
      return deploys.request(params.id, body, who());
    },
  );

  routes.on('GET /api/operations', { access: 'fleet.read', query: OperationListQuery }, (req, res, { query }) =>
    operations.list(query, readsOutput(res)),
  );

  routes.on('GET /api/operations/:id', { access: 'fleet.read' }, (req, res, { params }) =>
    operations.get(params.id, readsOutput(res)),
  );

  routes.on('DELETE /api/operations/:id', { access: 'fleet.operate' }, (req, res, { params }) => {
    res.status(204);
    operations.cancel(params.id, who(), roleHas(userOf(res).role, 'hosts.manage'));
    res.end();
  });

  routes.on('POST /api/hosts/:id/logs', { access: 'diagnostics.read' }, (req, res, { params }) => {
    const hostId = params.id;
    res.status(202);
    return operations.requestLogs(hostId, who());
  });

  routes.on('GET /api/hosts/:id/guests/:vmid/configs', { access: 'diagnostics.read' }, (req, res, { params }) =>
    guestConfigs.list(params.id, params.vmid),
  );
  routes.on('GET /api/hosts/:id/guests/:vmid/configs/:cid', { access: 'diagnostics.read' }, (req, res, { params }) => {
    res.type('text/plain').send(guestConfigs.text(params.id, params.vmid, params.cid));
  });
  routes.on(
    'GET /api/hosts/:id/guests/:vmid/configs/:cid/diff',
    {
      access: 'diagnostics.read',
      query: AgainstQuery,
    },
    async (req, res, { params, query }) => {
      const diff = await guestConfigs.diff(params.id, params.vmid, params.cid, query.against);
      res.type('text/plain').send(diff);
    },
  );

  routes.on('GET /api/hosts/:id/maintenance', { access: 'hosts.read' }, (req, res, { params }) => maintenance.get(params.id));
  routes.on('PUT /api/hosts/:id/maintenance',
    { access: 'settings.manage', body: MaintenanceBody },
    (req, res, { params, body }) => {
      return maintenance.put(params.id, body, who());
    },
  );

  // ---- agents ---------------------------------------------------------------------------------
  const tokenHash = (req: Request) => sha256(bearerOfKind(req.get('authorization'), 'host')!);

  routes.on('GET /api/agent/commands',
    { access: 'machine', credentials: ['host'], query: WaitQuery },
    async (req, res, { query }): Promise<CommandsAnswer | undefined> => {
      const host = agentCredentialOf(res, 'host');
      const { wait } = query;
      const commands = await operations.poll(host.id, tokenHash(req), wait, (cancel) => res.on('close', cancel));
      if (commands.length) return { commands: commands as CommandsAnswer['commands'] };
      res.status(204).end();
      return undefined;
    },
  );

  routes.on('POST /api/agent/operations/:operation_id/result',
    { access: 'machine', credentials: ['host'], body: OperationResultBody },
    (req, res, { params, body }) => {
      operations.result(agentCredentialOf(res, 'host').id, params.operation_id, body);
      res.status(204).end();
    },
  );

  routes.on('POST /api/agent/guest-configs',
    { access: 'machine', credentials: ['host'], body: GuestConfigBody },
    (req, res, { body }) => {
      guestConfigs.upload(agentCredentialOf(res, 'host').id, body);
      res.status(204).end();
    },
  );
}
