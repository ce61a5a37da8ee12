import type { OperationType } from '../../contract/operations.js';
import type { OperationRow } from '../repo.js';
import { announceOperation, type OperationParts } from '../parts.js';
import { commandKind, type AgentCommandKind, type CommandKind } from './types.js';

/** "not fetched within 10 minutes makes it expired" */
export const UNFETCHED_MS = 10 * 60 * 1000;
/** "no result within 5 minutes of sending makes it expired" */
export const RESULT_MS = 5 * 60 * 1000;

type QueuedKind<C> = Pick<CommandKind<C & { type: string }, OperationRow>, 'render' | 'ended'> & {
  type: OperationType;
  /** How long after sending its result may come; RESULT_MS unless the command may run longer. */
  resultDueMs?: (op: OperationRow) => number;
};

/**
 * A kind whose commands wait as `pending` operations until the agent fetches them (a command poll or
 * a heartbeat), go out once as `sent`, and end with the agent's result or, when none comes in time,
 * as `expired` through the sweep. Guest actions and log requests are such kinds.
 */
export function queuedKind<C extends { type: string }>(kind: QueuedKind<C>): AgentCommandKind<C> {
  return commandKind<C, OperationRow>({
    due: ({ ops, host }) => (host.state === 'active' ? ops.pendingOf(host.id, kind.type) : []),
    deliver(contact, op) {
      contact.ops.markSent(op.id, contact.now, contact.now + (kind.resultDueMs?.(op) ?? RESULT_MS));
      announceOperation(contact, op.id);
      return op;
    },
    render: kind.render,
    polled: true,
    takesResults: true,
    ended: kind.ended,
    sweep: (parts, now) => expireOverdue(parts, kind.type, kind.ended, now),
  });
}

/** Each overdue operation of the type expires in its own small transaction, with what its end changes (`ended`). */
export function expireOverdue(
  parts: OperationParts,
  type: OperationType,
  ended: ((parts: OperationParts, op: OperationRow, status: 'expired', now: number) => void) | undefined,
  now: number,
): void {
  const { ctx, ops } = parts;
  const expire = ctx.transaction((id: string) => {
    const op = ops.byId(id);
    if (!op || (op.status !== 'pending' && op.status !== 'sent')) return;
    if (!ops.finish(op.id, op.status, 'expired', now)) return;
    ended?.(parts, op, 'expired', now);
    announceOperation(parts, op.id);
  });
  for (const op of ops.overdue(type, now - UNFETCHED_MS, now)) expire(op.id);
}
