import { ACTION_TIME_LIMITS_S, type GuestActionCommand, type OperationStatus } from '../../contract/operations.js';
import { HttpError } from '../../errors.js';
import { actingAs, type Actor } from '../../http/request-context.js';
import type { OperationRow } from '../repo.js';
import type { OperationParts } from '../parts.js';
import { queuedKind, RESULT_MS } from './queued.js';

/** A verb's time limit on the host and a minute for its result to come back, but never less than PRODUCT.md's 5 minutes. */
const resultDueMs = (op: OperationRow) => Math.max(RESULT_MS, ((op.action ? ACTION_TIME_LIMITS_S[op.action] : 0) + 60) * 1000);

/**
 * A guest action (server/operations/guest-actions.ts makes them): the agent runs `qm`/`pct` with the verb
 * and builds its argument list itself from these fields. Its end changes the registry in two cases:
 * "the new guest's registry instance is ... removed again if the clone fails", and "its instance is
 * deleted when the destroy succeeds".
 */
export const guestAction = queuedKind<GuestActionCommand>({
  type: 'guest.action',
  resultDueMs,
  render(op) {
    const params = JSON.parse(op.params) as { guest_type: 'qemu' | 'lxc'; name?: string; snapshot?: string; new_vmid?: number; full?: boolean };
    const { guest_type, ...fields } = params;
    return { type: 'guest.action', operation_id: op.id, vmid: op.vmid!, guest_type, action: op.action!, ...fields };
  },
  ended(parts, op, status) {
    if (op.action === 'clone' && status !== 'succeeded') {
      const { new_vmid } = JSON.parse(op.params) as { new_vmid: number };
      removeInstance(parts, op, new_vmid, `the clone ${status === 'cancelled' ? 'was cancelled' : status}`);
    }
    if (op.action === 'destroy' && status === 'succeeded') removeInstance(parts, op, op.vmid!, 'its guest was destroyed');
  },
});

/**
 * Deletes the registry instance an operation stood for, through the registry's own rules: a missing
 * one is nothing to do, and one someone moved to production since is left (the registry refuses it).
 */
export function removeInstance({ repo, audit, instances }: OperationParts, op: OperationRow, vmid: number, why: OperationStatus | string): void {
  const host = repo.hostById(op.host_id)!;
  const actor: Actor = { type: 'agent', id: host.id, name: host.hostname };
  let name: string;
  try {
    name = instances.get(vmid).name;
    actingAs(actor, () => instances.remove(vmid));
  } catch (err) {
    if (err instanceof HttpError) return;
    throw err;
  }
  // The instance's own entry records its deletion; this one says why, about the operation.
  audit.write({
    actor,
    action: 'host.instance_removed',
    subject: { type: 'operation', id: op.id, name: `${op.action ?? op.type} of guest ${vmid}` },
    summary: `agent:${host.hostname} deleted instance ${vmid} “${name}”: ${why} (operation ${op.id})`,
    detail: { operation_id: op.id, host_id: host.id, vmid },
  });
}
