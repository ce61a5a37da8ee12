import type { ScriptCommand } from '../../contract/scripts.js';
import type { OperationRow } from '../repo.js';
import { announceOperation } from '../parts.js';
import { wrongTarget, type ScriptParams, type ScriptSource } from '../script-source.js';
import { expireOverdue, RESULT_MS } from './queued.js';
import { commandKind } from './types.js';

type Found = NonNullable<ReturnType<ScriptSource['get']>>;

interface Delivered {
  op: OperationRow;
  params: ScriptParams;
  script: Found;
}

const paramsOf = (op: OperationRow) => JSON.parse(op.params) as ScriptParams;

/**
 * A script run (server/operations/scripts.ts makes them). The body and its SHA-256 are read when the
 * command is handed out, as a deploy reads its keys: a script deleted while the run waited fails it,
 * naming the script, before anything runs; a script changed meanwhile runs as it is now. Its result
 * is due a minute after its own time limit (never less than PRODUCT.md's 5 minutes).
 */
export const script = commandKind<ScriptCommand, OperationRow, Delivered>({
  due: ({ ops, host }) => (host.state === 'active' ? ops.pendingOf(host.id, 'script') : []),
  deliver(contact, op) {
    const params = paramsOf(op);
    const found = contact.scripts.get(params.script_id);
    const gone = !found
      ? `script “${params.script_name}” (id ${params.script_id}) was deleted after the run was asked for`
      : (op.vmid === null) !== (found.runs_on === 'host')
        ? `${wrongTarget(found, op.vmid)} (it was changed after the run was asked for)`
        : undefined;
    if (gone || !found) {
      if (contact.ops.finish(op.id, 'pending', 'failed', contact.now, null, `homefleet: ${gone}; nothing was run\n`)) announceOperation(contact, op.id);
      return undefined;
    }
    if (!contact.ops.markSent(op.id, contact.now, contact.now + Math.max(RESULT_MS, (params.timeout_s + 60) * 1000))) return undefined;
    announceOperation(contact, op.id);
    return { op, params, script: found };
  },
  render: ({ op, params, script: s }) => ({
    type: 'script',
    operation_id: op.id,
    script_id: s.id,
    sha256: s.sha256,
    interpreter: s.interpreter,
    body: s.body,
    ...(op.vmid !== null ? { vmid: op.vmid } : {}),
    timeout_s: params.timeout_s,
  }),
  polled: true,
  takesResults: true,
  sweep: (parts, now) => expireOverdue(parts, 'script', undefined, now),
});
