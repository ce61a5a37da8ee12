import { nameOf } from '../audit.js';
import { DISRUPTIVE_ACTIONS, TEMPLATE_ACTIONS, type OperationAccepted } from '../contract/operations.js';
import { conflict, HttpError, notFound } from '../errors.js';
import type { CommandChannel } from './command-channel.js';
import type { Deploys } from './deploys.js';
import type { Maintenance } from './maintenance.js';
import type { GuestActionRequest } from '../contract/inputs/operations.js';
import { requireHost, type Who } from '../hosts/parts.js';
import { queueOperation, requireReachable, type OperationParts } from './parts.js';

/** The registry's production rule, as a destroy meets it. */
export const PRODUCTION_DESTROY = 'production instances cannot be destroyed; change the stack to development first';

/** The fields of the action that go into the command (the agent builds its argument list from them). */
function paramsOf(body: GuestActionRequest): Record<string, unknown> {
  switch (body.action) {
    case 'snapshot':
      return { name: body.name };
    case 'rollback':
      return { snapshot: body.snapshot };
    case 'clone':
      return { new_vmid: body.new_vmid, name: body.name, full: body.full ?? false };
    default:
      return {};
  }
}

/**
 * POST /api/hosts/:id/guests/:vmid/actions (PRODUCT.md): every rule is checked inside the transaction
 * that makes the operation, so parallel requests for one guest give exactly one (the database's
 * one-open-action-per-guest index holds it too). A clone's registry instance is created in the same
 * transaction. `force` comes only from an administrator (the route refuses an operator's with 403).
 */
export function createGuestActions(parts: OperationParts, maintenance: Maintenance, channel: CommandChannel, deploys: Deploys) {
  const { ctx, repo, ops, audit, instances } = parts;

  const requestTx = ctx.transaction((hostId: number, vmid: number, body: GuestActionRequest, who: Who, now: number): string => {
    const host = requireHost(repo, hostId);
    const guest = repo.guestOf(hostId, vmid);
    if (!guest || host.state === 'deleted') throw notFound('guest not found');
    requireReachable(parts, host, now);
    if (ops.openForGuest(hostId, vmid)) throw conflict('an operation is already pending for this guest');
    // "A locked guest refuses actions with 409 until the lock clears": Proxmox would refuse it anyway, minutes later.
    if (guest.lock) throw conflict(`guest is locked (${guest.lock})`);
    if (guest.template && !TEMPLATE_ACTIONS.includes(body.action)) throw conflict('guest is a template');
    const disruptive = DISRUPTIVE_ACTIONS.includes(body.action);
    const forced = disruptive && maintenance.closed(hostId, now);
    if (forced && body.force !== true) throw conflict("outside the host's maintenance window");
    // A rebuild is a deploy under the guest's own vmid: an operation of type deploy.
    if (body.action === 'rebuild') return deploys.rebuild(host, vmid, guest.name, body, forced, who, now);

    if (body.action === 'destroy') {
      // "only a stopped guest whose registry instance is absent or on the development stack"
      if (guest.status !== 'stopped') throw conflict(`only a stopped guest can be destroyed; ${guest.name || `guest ${vmid}`} is ${guest.status || 'in an unknown state'}`);
      const instance = safeGet(vmid);
      if (instance?.stack === 'production') throw conflict(PRODUCTION_DESTROY);
    }
    if (body.action === 'clone') {
      if (repo.vmidReported(body.new_vmid)) throw conflict('vmid already exists');
      // "created with state testing, stack development, in the same transaction as the operation"
      instances.create({ vmid: body.new_vmid, name: body.name, state: 'testing', stack: 'development' });
    }

    const id = queueOperation(parts, channel, {
      host_id: hostId,
      type: 'guest.action',
      vmid,
      action: body.action,
      params: { guest_type: guest.type, ...paramsOf(body) },
      reason: body.reason ?? null,
      requested_by: who.actor,
      requested_at: now,
    });
    const guestName = guest.name ? ` “${guest.name}”` : '';
    const what = body.action === 'clone' ? `clone of guest ${vmid}${guestName} to ${body.new_vmid} “${body.name}”` : `${body.action} of guest ${vmid}${guestName}`;
    audit.write({
      action: forced ? 'host.guest_action_forced' : 'host.guest_action',
      subject: { type: 'guest', id: `${hostId}/${vmid}`, name: guest.name || null },
      summary: `${nameOf()} ${forced ? 'forced' : 'asked for'} the ${what} on ${host.hostname}${forced ? ' outside its maintenance window' : ''}`,
      detail: { host: host.hostname, vmid, action: body.action, operation_id: id, ...paramsOf(body), ...(body.reason ? { reason: body.reason } : {}), ...(forced ? { force: true } : {}) },
    });
    return id;
  });

  /** The instance of a vmid, or undefined. */
  function safeGet(vmid: number) {
    try {
      return instances.get(vmid);
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) return undefined;
      throw err;
    }
  }

  return {
    request(hostId: number, vmid: number, body: GuestActionRequest, who: Who): OperationAccepted {
      try {
        return { operation_id: requestTx(hostId, vmid, body, who, ctx.clock.now()), status: 'pending' };
      } catch (err) {
        // The index behind the check: only a request racing another process's could meet it.
        if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('an operation is already pending for this guest');
        throw err;
      }
    },
  };
}
