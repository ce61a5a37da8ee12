import { DEPLOY_TIME_LIMIT_S, type DeployCommand } from '../../contract/operations.js';
import type { DeployFields } from '../../contract/provisioning.js';
import { missingLaunchables } from '../launch.js';
import { announceOperation, type OperationParts } from '../parts.js';
import type { OperationStatus } from '../../contract/operations.js';
import type { OperationRow } from '../repo.js';
import { removeInstance } from './guest-action.js';
import { expireOverdue, RESULT_MS } from './queued.js';
import { commandKind } from './types.js';

interface Delivered {
  op: OperationRow;
  fields: DeployFields;
  keys: string[];
  cloudConfig: string | undefined;
}

const fieldsOf = (op: OperationRow) => JSON.parse(op.params) as DeployFields;

/** What the end of a deploy changes, in the transaction that ends it. */
function ended(parts: OperationParts, op: OperationRow, status: OperationStatus, now: number): void {
  const fields = fieldsOf(op);
  if (op.action === 'rebuild') {
    // An instance deleted while its guest was rebuilt is not brought back.
    if (status !== 'succeeded' || !parts.instances.exists(op.vmid!)) return;
    parts.instances.keepDeploySpec(op.vmid!, fields, now, op.requested_by ?? 'unknown');
    parts.instances.rebuilt(op.vmid!, fields.source_type === 'volume' ? fields.source_volume! : `${fields.source_type} ${fields.source_vmid}`);
    return;
  }
  // "removed again if the deploy fails"
  if (status !== 'succeeded') removeInstance(parts, op, op.vmid!, `the deploy ${status === 'cancelled' ? 'was cancelled' : status}`);
}

/**
 * A deploy, or a rebuild (action `rebuild`: the agent stops and destroys the guest first), made by
 * server/operations/deploys.ts. The keys' lines and the config's body are read when the command is
 * handed out, not when it was asked for: a key or config deleted while it waited fails it, with the
 * one deleted named, before anything runs. A deploy that does not succeed takes its registry
 * instance with it; a rebuild that does keeps its new spec and one `rebuilt` history entry.
 */
export const deploy = commandKind<DeployCommand, OperationRow, Delivered>({
  due: ({ ops, host }) => (host.state === 'active' ? ops.pendingOf(host.id, 'deploy') : []),
  deliver(contact, op) {
    const fields = fieldsOf(op);
    const gone = missingLaunchables(contact.launchables, fields);
    if (gone) {
      const output = `homefleet: ${gone} after the ${op.action ?? 'deploy'} was asked for; nothing was run on the host\n`;
      if (contact.ops.finish(op.id, 'pending', 'failed', contact.now, null, output)) {
        ended(contact, op, 'failed', contact.now);
        announceOperation(contact, op.id);
      }
      return undefined;
    }
    if (!contact.ops.markSent(op.id, contact.now, contact.now + Math.max(RESULT_MS, (DEPLOY_TIME_LIMIT_S + 60) * 1000))) return undefined;
    announceOperation(contact, op.id);
    return {
      op,
      fields,
      keys: fields.server_key_ids.map((id) => contact.launchables.serverKey(id)!.public_key),
      cloudConfig: fields.cloud_config_id === null ? undefined : contact.launchables.cloudConfig(fields.cloud_config_id)!.body,
    };
  },
  render: ({ op, fields: f, keys, cloudConfig }) => ({
    type: 'deploy',
    operation_id: op.id,
    new_vmid: op.vmid!,
    rebuild: op.action === 'rebuild',
    source: f.source_type === 'volume' ? { kind: 'volume', volume: f.source_volume! } : { kind: f.source_type, vmid: f.source_vmid! },
    name: f.name,
    // The agent reads an absent field as not given; it refuses a null where it wants a value.
    ...(f.full ? { full: true } : {}),
    ...(f.storage !== null ? { storage: f.storage } : {}),
    ...(f.cores !== null ? { cores: f.cores } : {}),
    ...(f.memory_mb !== null ? { memory_mb: f.memory_mb } : {}),
    ...(f.disk_gb !== null ? { disk_gb: f.disk_gb } : {}),
    ...(f.network !== null ? { network: f.network } : {}),
    ...(f.ci_user !== null ? { ci_user: f.ci_user } : {}),
    ssh_keys: keys,
    ...(cloudConfig !== undefined ? { cloud_config: cloudConfig, snippets_storage: f.snippets_storage! } : {}),
    start: f.start,
  }),
  polled: true,
  takesResults: true,
  ended,
  sweep: (parts, now) => expireOverdue(parts, 'deploy', ended, now),
});
