import type { Request, Response } from 'express';
import * as z from 'zod';
import { roleHas } from '../contract/access.js';
import type { CommandsAnswer } from '../contract/operations.js';
import { forbidden } from '../errors.js';
import { agentCredentialOf, userOf } from '../http/locals.js';
import { actorName, currentContext } from '../http/request-context.js';
import type { RouteTable } from '../http/routes.js';
import { parseIntegerParam, parseWith } from '../http/validate.js';
import { GuestActionBody, GuestConfigBody, maintenanceBody, OperationResultBody, parseOperationQuery, parseWait } from './schema.js';
import { serverTimeZone } from './maintenance-windows.js';
import type { OperationService } from './service.js';
import { bearerOfKind, sha256 } from '../hosts/tokens.js';

const doc = (status: number, description: string, contentType?: string) => ({ status, description, ...(contentType ? { contentType } : {}) });
const OperationQueryDoc = z.lazy(() =>
  z.object({
    host_id: z.string().optional().describe('only this host'),
    vmid: z.string().optional().describe('only this guest'),
    status: z.string().optional().describe('pending, sent, succeeded, failed, expired or cancelled'),
    limit: z.string().optional().describe('1 to 1000 (100)'),
  }),
);
const WaitDoc = z.lazy(() => z.object({ wait: z.string().optional().describe('seconds to wait for a command, 0 to 30 (25)') }));
const AgainstDoc = z.lazy(() => z.object({ against: z.string().optional().describe('the version to compare with (default: the one before)') }));

const id = (raw: string | undefined) => parseIntegerParam(raw, 'invalid id');
const vmidOf = (raw: string | undefined) => parseIntegerParam(raw, 'invalid vmid');
/** "`output` only for diagnostics.read, otherwise absent" */
const readsOutput = (res: Response) => roleHas(userOf(res).role, 'diagnostics.read');

/**
 * Guest control through agents (PRODUCT.md): guest actions, operations, log requests, guest configs
 * and maintenance policies for people; the command poll, results and config uploads for agents.
 */
/** Who asks, for the operations' `requested_by`; the change log reads the context itself. */
const who = () => ({ actor: actorName(currentContext().actor) });

export function registerOperationRoutes(routes: RouteTable, service: OperationService): void {
  const { operations, guestActions, guestConfigs, maintenance } = service;

  routes.post(
    '/api/hosts/:id/guests/:vmid/actions',
    { access: 'fleet.operate', body: GuestActionBody, documentedResponse: doc(202, 'The operation, pending until the agent fetches it') },
    (req, res) => {
      // Forcing past a maintenance window is an administrator's call ("an operator's force → 403").
      if (req.body.force === true && !roleHas(userOf(res).role, 'settings.manage')) throw forbidden('only an administrator may force an action');
      const hostId = id(req.params.id);
      const vmid = vmidOf(req.params.vmid);
      res.status(202);
      return guestActions.request(hostId, vmid, req.body, who());
    },
  );

  routes.get('/api/operations', { access: 'fleet.read', documentedQuery: OperationQueryDoc, documentedResponse: doc(200, 'Operations, newest first') }, (req, res) =>
    operations.list(parseOperationQuery(req.query as Record<string, unknown>), readsOutput(res)),
  );

  routes.get('/api/operations/:id', { access: 'fleet.read', documentedResponse: doc(200, 'The operation') }, (req, res) =>
    operations.get(req.params.id ?? '', readsOutput(res)),
  );

  routes.delete('/api/operations/:id', { access: 'fleet.operate', documentedResponse: doc(204, 'Cancelled (only a pending operation)') }, (req, res) => {
    res.status(204);
    operations.cancel(req.params.id ?? '', who(), roleHas(userOf(res).role, 'hosts.manage'));
    res.end();
  });

  routes.post('/api/hosts/:id/logs', { access: 'diagnostics.read', documentedResponse: doc(202, 'A logs operation: the agent answers with the last 200 lines of its journal') }, (req, res) => {
    const hostId = id(req.params.id);
    res.status(202);
    return operations.requestLogs(hostId, who());
  });

  const configPath = '/api/hosts/:id/guests/:vmid/configs';
  routes.get(configPath, { access: 'diagnostics.read', documentedResponse: doc(200, 'The kept config versions of the guest, newest first') }, (req) =>
    guestConfigs.list(id(req.params.id), vmidOf(req.params.vmid)),
  );
  routes.get(`${configPath}/:cid`, { access: 'diagnostics.read', documentedResponse: doc(200, 'The config text', 'text/plain') }, (req, res) => {
    res.type('text/plain').send(guestConfigs.text(id(req.params.id), vmidOf(req.params.vmid), id(req.params.cid)));
  });
  routes.get(
    `${configPath}/:cid/diff`,
    {
      access: 'diagnostics.read',
      documentedQuery: AgainstDoc,
      documentedResponse: [doc(200, 'A unified diff', 'text/plain'), doc(422, 'The versions differ in more than 1,000 lines: `{"error":"the versions differ too much to show a diff"}`')],
    },
    async (req, res) => {
      const against = (req.query as Record<string, unknown>).against;
      const other = typeof against === 'string' && against !== '' ? parseIntegerParam(against, 'invalid against') : undefined;
      const diff = await guestConfigs.diff(id(req.params.id), vmidOf(req.params.vmid), id(req.params.cid), other);
      res.type('text/plain').send(diff);
    },
  );

  routes.get('/api/hosts/:id/maintenance', { access: 'hosts.read', documentedResponse: doc(200, "The host's maintenance policy") }, (req) => maintenance.get(id(req.params.id)));
  routes.put(
    '/api/hosts/:id/maintenance',
    { access: 'settings.manage', documentedBody: z.lazy(() => maintenanceBody('UTC')), documentedResponse: doc(200, 'The policy as stored') },
    (req, res) => {
      const hostId = id(req.params.id);
      // Without a zone, the server's own.
      return maintenance.put(hostId, parseWith(maintenanceBody(serverTimeZone()), req.body), who());
    },
  );

  // ---- agents ---------------------------------------------------------------------------------
  const tokenHash = (req: Request) => sha256(bearerOfKind(req.get('authorization'), 'host')!);

  routes.get(
    '/api/agent/commands',
    { access: 'machine', credentials: ['host'], documentedQuery: WaitDoc, documentedResponse: [doc(200, 'Guest actions and log requests for this host'), doc(204, 'None came within the wait')] },
    async (req, res): Promise<CommandsAnswer | undefined> => {
      const host = agentCredentialOf(res, 'host');
      const wait = parseWait((req.query as Record<string, unknown>).wait);
      const commands = await operations.poll(host.id, tokenHash(req), wait, (cancel) => res.on('close', cancel));
      if (commands.length) return { commands: commands as CommandsAnswer['commands'] };
      res.status(204).end();
      return undefined;
    },
  );

  routes.post(
    '/api/agent/operations/:operation_id/result',
    { access: 'machine', credentials: ['host'], body: OperationResultBody, documentedResponse: doc(204, 'Result taken (a repeat changes nothing)') },
    (req, res) => {
      operations.result(agentCredentialOf(res, 'host').id, req.params.operation_id ?? '', req.body);
      res.status(204).end();
    },
  );

  routes.post(
    '/api/agent/guest-configs',
    { access: 'machine', credentials: ['host'], body: GuestConfigBody, documentedResponse: doc(204, 'Stored (or the same as the last version)') },
    (req, res) => {
      guestConfigs.upload(agentCredentialOf(res, 'host').id, req.body);
      res.status(204).end();
    },
  );
}
