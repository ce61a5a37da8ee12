import type { Request, RequestHandler, Response } from 'express';
import type { AppContext } from '../context.js';
import type { CreatedEnrollmentToken, HostRemoval } from '../contract/hosts.js';
import type { CredentialResolvers } from '../http/credentials.js';
import { agentCredentialOf } from '../http/locals.js';
import { actorName, currentContext, type Actor } from '../http/request-context.js';
import type { RouteTable } from '../http/routes.js';
import type { DeletionRow, EnrollmentTokenRow, HostRow } from './repo.js';
import { baseUrlOf } from '../releases/routes.js';
import { DriftApply, EnrollBody, EnrollmentTokenCreate, HostDeleteQuery, HostPatch, UpgradeRequest } from '../contract/inputs/hosts.js';
import { StorageVolumesBody } from '../contract/inputs/storage.js';
import { HeartbeatBody, parseHeartbeat, parseStorageVolumes } from './schema.js';
import type { HostService, Who } from './service.js';
import { shellQuote } from '../releases/shell-quote.js';
import { bearerOfKind, TOKEN_PREFIX, type AgentTokenKind } from './tokens.js';
import { isLoopbackHost } from '../tls/names.js';

declare module '../http/credentials.js' {
  interface AgentCredentials {
    enrollment: EnrollmentTokenRow;
    host: HostRow;
    receipt: DeletionRow;
  }
}

/**
 * The agent credentials for the authentication step (server/access/authenticate.ts): each kind's
 * prefix, and what the request's token of that kind stands for (its shape checked first).
 */
export function agentCredentials(hosts: HostService): CredentialResolvers['agents'] {
  const resolver = <T>(kind: AgentTokenKind, find: (token: string, req: Request) => T | undefined, actor: (found: T) => Actor) => ({
    prefix: TOKEN_PREFIX[kind],
    resolve(req: Request): T | undefined {
      const token = bearerOfKind(req.get('authorization'), kind);
      return token === undefined ? undefined : find(token, req);
    },
    actor,
  });
  const agentOf = (hostId: number): Actor => ({ type: 'agent', id: hostId, name: hosts.repo.hostById(hostId)?.hostname ?? String(hostId) });
  return {
    // An enrolling agent has no host yet: enroll names the host it becomes.
    enrollment: resolver('enrollment', (token) => hosts.findUsableEnrollmentToken(token), () => ({ type: 'anonymous' })),
    host: resolver('host', (token) => hosts.findHostByToken(token), (host) => ({ type: 'agent', id: host.id, name: host.hostname })),
    receipt: resolver('receipt', (token, req) => hosts.findDeletionByReceipt(String(req.params.operation_id ?? ''), token), (deletion) => agentOf(deletion.host_id)),
  };
}

/** Who asks, for the rows that keep it (an enrollment token's `created_by`); the change log reads the context itself. */
const who = (): Who => ({ actor: actorName(currentContext().actor) });

/**
 * PRODUCT.md's public installer line, with the pin of a self-signed certificate when there is one.
 * The root form (`| bash`): a Proxmox node is run as root and has no sudo.
 */
export function installCommand(base: string, token: string, fingerprint: string | undefined): string {
  const script = shellQuote(`${base}/install/agent.sh`);
  if (!fingerprint) return `curl -fsSL ${script} | bash -s -- --token ${shellQuote(token)}`;
  // With a self-signed certificate curl checks the pinned key instead of a certificate authority.
  const pin = shellQuote(fingerprint);
  return `curl -fsSL --insecure --pinnedpubkey ${shellQuote(`sha256//${fingerprint}`)} ${script} | bash -s -- --token ${shellQuote(token)} --fingerprint ${pin}`;
}

/** Why the install command for `base` cannot work from another machine as things stand; empty when it can. */
export function installNotes(base: string, agentAllowHttp: boolean): string[] {
  const url = new URL(base);
  const notes: string[] = [];
  if (url.protocol === 'http:' && !agentAllowHttp) {
    notes.push(
      'This server speaks plain HTTP and agents enroll only over HTTPS: the installer would stop with 403 "https required". Serve HTTPS (HOST=0.0.0.0 turns on the built-in certificate, or put a TLS proxy in front and set FLEET_PUBLIC_URL), or, for development only, set FLEET_AGENT_ALLOW_HTTP=true.',
    );
  }
  if (isLoopbackHost(url.hostname)) {
    notes.push(
      `The command names ${url.host}, which on the hypervisor is the hypervisor itself. Open this page at an address the hypervisor can reach (this server's LAN name or address), or set FLEET_PUBLIC_URL.`,
    );
  }
  return notes;
}

/** The pin of the certificate homefleet made itself (server/tls), in the agent's `--fingerprint` form: base64 of the SPKI SHA-256. */
function selfSignedPin(ctx: AppContext): string | undefined {
  return ctx.tls?.selfSigned ? ctx.tls.spkiPin.replace(/^sha256\/\//, '') : undefined;
}

export function registerHostRoutes(routes: RouteTable, ctx: AppContext, hosts: HostService): void {
  const bearer = (req: Request) => bearerOfKind(req.get('authorization'), 'host')!;
  // Per host, before the body (up to 4 MiB of guests) is read: see heartbeat-limit.ts.
  const admitHeartbeat: RequestHandler = (_req, res, next) => {
    hosts.admitHeartbeat(agentCredentialOf(res, 'host'));
    next();
  };

  // ---- management (sessions) ------------------------------------------------------------
  // enrollment-tokens first: Express matches in order, and it is not a host id.

  // A browser session only: an enrollment token minted with a personal API token would outlive that token's revocation.
  routes.on('POST /api/hosts/enrollment-tokens', { access: 'hosts.manage', credentials: ['session'], body: EnrollmentTokenCreate }, (req, res, { body }): CreatedEnrollmentToken => {
    const base = baseUrlOf(req, ctx.config.publicOrigin);
    const created = hosts.createEnrollmentToken(body, who());
    res.status(201);
    return {
      ...created,
      install_command: installCommand(base, created.token, ctx.config.tlsFingerprint ?? selfSignedPin(ctx)),
      install_notes: installNotes(base, ctx.config.agentAllowHttp),
    };
  });

  routes.on('GET /api/hosts/enrollment-tokens', { access: 'hosts.read' }, () => hosts.listEnrollmentTokens());

  routes.on('DELETE /api/hosts/enrollment-tokens/:id', { access: 'hosts.manage' }, (req, res, { params }) => {
    hosts.revokeEnrollmentToken(params.id, who());
    res.status(204).end();
  });

  routes.on('GET /api/hosts', { access: 'hosts.read' }, () => hosts.list());

  routes.on('GET /api/hosts/:id', { access: 'hosts.read' }, (req, res, { params }) => hosts.get(params.id));

  routes.on('GET /api/hosts/:id/storage', { access: 'hosts.read' }, (req, res, { params }) => hosts.storages.list(params.id));

  routes.on('PATCH /api/hosts/:id', { access: 'hosts.manage', body: HostPatch }, (req, res, { params, body }) =>
    hosts.update(params.id, body, who()),
  );

  routes.on('DELETE /api/hosts/:id',
    { access: 'hosts.manage', query: HostDeleteQuery },
    (req, res, { params, query }): HostRemoval => {
      const force = query.force === 'true';
      const deletion = hosts.remove(params.id, force, who());
      res.status(force ? 200 : 202);
      return { operation_id: deletion.operation_id, status: deletion.status };
    },
  );

  routes.on('POST /api/hosts/:id/revoke-token', { access: 'hosts.manage' }, (req, res, { params }) => {
    hosts.revokeHostToken(params.id, who());
    res.status(204).end();
  });

  routes.on('POST /api/hosts/:id/upgrade', { access: 'hosts.manage', body: UpgradeRequest }, (req, res, { params, body }) => {
    const host = hosts.requestUpgrade(params.id, body, who());
    res.status(202);
    return host;
  });

  // Applying drift changes the registry, so it is an operator's action, like any instance write.
  routes.on('POST /api/hosts/:id/drift/apply', { access: 'fleet.operate', body: DriftApply }, (req, res, { params, body }) =>
    hosts.applyDrift(params.id, body, who()),
  );

  // ---- agents (their own tokens only) -------------------------------------------------------

  routes.on('POST /api/agent/enroll',
    { access: 'machine', credentials: ['enrollment'], body: EnrollBody },
    (req, res, { body }) => {
      const token = agentCredentialOf(res, 'enrollment');
      const result = hosts.enroll(token.id, body, req.ip ?? null);
      res.status(201);
      return result;
    },
  );

  routes.on('POST /api/agent/heartbeat',
    { access: 'machine', credentials: ['host'], body: HeartbeatBody, parse: parseHeartbeat, bodyLimit: '4mb', before: [admitHeartbeat] },
    // Checked a slice of guests at a time (parseHeartbeat), compared with what is stored likewise, then stored in a turn of its own (heartbeat.ts).
    (req, _res, { body }) => hosts.heartbeat(bearer(req), body),
  );

  // 10,000 volumes with the longest volume ids are about 4.5 MiB, checked a slice at a time (parseStorageVolumes).
  routes.on('POST /api/agent/storage',
    { access: 'machine', credentials: ['host'], body: StorageVolumesBody, parse: parseStorageVolumes, bodyLimit: '5mb' },
    (req, res, { body }) => {
      hosts.storages.volumes(agentCredentialOf(res, 'host').id, body);
      res.status(204).end();
    },
  );

  routes.on('POST /api/agent/receipts/:operation_id',
    {
      access: 'machine',
      credentials: ['receipt'],
    },
    (req, res) => {
      hosts.confirmReceipt(agentCredentialOf(res, 'receipt'), req.ip ?? null);
      res.status(204).end();
    },
  );
}
