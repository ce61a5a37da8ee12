import { nameOf } from '../audit.js';
import type { GuestActionRequest } from '../contract/inputs/operations.js';
import { DNS_LABEL, type DeployRequest } from '../contract/inputs/provisioning.js';
import type { OperationAccepted } from '../contract/operations.js';
import { conflict, validationFailed } from '../errors.js';
import { requireHost, type Who } from '../hosts/parts.js';
import type { HostRow } from '../hosts/repo.js';
import type { DeployFields } from '../contract/provisioning.js';
import type { CommandChannel } from './command-channel.js';
import { launchFields, requireLaunchables, type LaunchValues } from './launch.js';
import { queueOperation, requireReachable, type OperationParts } from './parts.js';

export const PRODUCTION_REBUILD = "rebuilding a production instance needs an administrator's force";

type RebuildRequest = Extract<GuestActionRequest, { action: 'rebuild' }>;

/** Where a launch comes from, in words for the change log. */
const sourceWords = (f: DeployFields) => (f.source_type === 'volume' ? `template volume ${f.source_volume}` : `${f.source_type === 'qemu' ? 'VM' : 'container'} ${f.source_vmid}`);

/** What the change log keeps of a launch: its spec (ids and names of keys and config, never their text). */
const auditDetail = (host: HostRow, id: string, f: DeployFields) => ({ host: host.hostname, operation_id: id, ...f });

export type Deploys = ReturnType<typeof createDeploys>;

/**
 * POST /api/hosts/:id/deploy and the rebuild action (PRODUCT.md "Deploy, rebuild and server keys").
 * Every rule is checked inside the transaction that makes the operation; a deploy's registry
 * instance and its spec are written in that same transaction, so ten parallel deploys onto one vmid
 * make one operation and nine 409s. Keys and configs are named by id here; their text goes out only
 * in the command (server/operations/commands/deploy.ts).
 */
export function createDeploys(parts: OperationParts, channel: CommandChannel) {
  const { ctx, repo, ops, audit, instances, launchables } = parts;

  const queue = (host: HostRow, vmid: number, action: 'rebuild' | null, fields: DeployFields, reason: string | null, who: Who, now: number): string =>
    queueOperation(parts, channel, { host_id: host.id, type: 'deploy', vmid, action, params: fields, reason, requested_by: who.actor, requested_at: now });

  const deployTx = ctx.transaction((hostId: number, body: DeployRequest, who: Who, now: number): string => {
    const host = requireHost(repo, hostId);
    requireReachable(parts, host, now);
    const fields = launchFields(repo, launchables, hostId, body);
    // "409 vmid already exists for a vmid in the registry or in any online host's last heartbeat"
    if (repo.vmidReported(body.new_vmid) || instances.exists(body.new_vmid)) throw conflict('vmid already exists');
    if (ops.openForGuest(hostId, body.new_vmid)) throw conflict('an operation is already pending for this guest');
    instances.create({ vmid: body.new_vmid, name: body.name, state: body.state, stack: body.stack, tags: body.tags ?? [] });
    instances.keepDeploySpec(body.new_vmid, fields, now, who.actor ?? 'unknown');
    const id = queue(host, body.new_vmid, null, fields, null, who, now);
    audit.write({
      action: 'host.deploy',
      subject: { type: 'guest', id: `${hostId}/${body.new_vmid}`, name: body.name },
      summary: `${nameOf()} asked for the deploy of guest ${body.new_vmid} “${body.name}” from ${sourceWords(fields)} on ${host.hostname}`,
      detail: auditDetail(host, id, fields),
    });
    return id;
  });

  return {
    request(hostId: number, body: DeployRequest, who: Who): OperationAccepted {
      try {
        return { operation_id: deployTx(hostId, body, who, ctx.clock.now()), status: 'pending' };
      } catch (err) {
        if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('an operation is already pending for this guest');
        throw err;
      }
    },

    /**
     * Inside the guest action's transaction, after its checks (the guest, the host, the lock, the
     * window): "refuses a guest whose instance is on production unless an administrator sends force"
     * (`force` reaches here only from one), then the spec, or `source_vmid` plus fields when the guest
     * has none, with the rebuild's own fields over it.
     */
    rebuild(host: HostRow, vmid: number, guestName: string, body: RebuildRequest, forced: boolean, who: Who, now: number): string {
      const stack = instances.exists(vmid) ? instances.get(vmid).stack : null;
      if (stack === 'production' && body.force !== true) throw conflict(PRODUCTION_REBUILD);
      const spec = instances.deploySpec(vmid);
      const { action: _action, force: _force, reason, ...given } = body;
      if (!spec && given.source_vmid === undefined && given.source_volume === undefined) {
        throw validationFailed([{ field: 'source_vmid', message: `guest ${vmid} was not deployed by homefleet: name the template to rebuild it from` }]);
      }
      if (spec) requireLaunchables(launchables, spec);
      const kept = specValues(spec);
      // A source given replaces the spec's, whichever kind each is.
      if (given.source_vmid !== undefined || given.source_volume !== undefined) {
        delete kept.source_vmid;
        delete kept.source_volume;
      }
      const name = given.name ?? spec?.name ?? guestName;
      if (!DNS_LABEL.test(name)) throw validationFailed([{ field: 'name', message: `“${guestName}” is not a DNS label: give the guest's name (lower-case letters, digits and -)` }]);
      const fields = launchFields(repo, launchables, host.id, { ...kept, ...given, name } as LaunchValues);
      const id = queue(host, vmid, 'rebuild', fields, reason ?? null, who, now);
      audit.write({
        action: forced ? 'host.guest_rebuild_forced' : 'host.guest_rebuild',
        subject: { type: 'guest', id: `${host.id}/${vmid}`, name: guestName || null },
        summary: `${nameOf()} ${forced ? 'forced' : 'asked for'} the rebuild of guest ${vmid}${guestName ? ` “${guestName}”` : ''} from ${sourceWords(fields)} on ${host.hostname}${forced ? ' outside its maintenance window' : ''}`,
        detail: { ...auditDetail(host, id, fields), ...(reason ? { reason } : {}), ...(body.force ? { force: true } : {}) },
      });
      return id;
    },
  };
}

/** A kept spec as launch values: its fields that a request would give (absent rather than null). */
function specValues(spec: DeployFields | null): Partial<LaunchValues> {
  if (!spec) return {};
  const values: Record<string, unknown> = {};
  const keep = ['source_vmid', 'source_volume', 'full', 'storage', 'cores', 'memory_mb', 'disk_gb', 'network', 'ci_user', 'cloud_config_id', 'snippets_storage', 'start'] as const;
  for (const field of keep) if (spec[field] !== null) values[field] = spec[field];
  if (spec.server_key_ids.length) values.server_key_ids = spec.server_key_ids;
  // A linked clone's `full: false` is the default: given, it would be refused beside a volume.
  if (spec.source_type === 'volume') delete values.full;
  return values as Partial<LaunchValues>;
}
