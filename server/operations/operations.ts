import { randomUUID } from 'node:crypto';
import { nameOf } from '../audit.js';
import type { AgentCommand } from '../contract/hosts.js';
import type { OperationQuery, OperationResult } from '../contract/inputs/operations.js';
import type { Operation, OperationAccepted } from '../contract/operations.js';
import { conflict, forbidden, invalidToken, notFound } from '../errors.js';
import type { CommandChannel } from './command-channel.js';
import { kindOf, polledCommandsFor } from './commands/index.js';
import { presentOperation } from './view.js';
import { requireHost, type Who } from '../hosts/parts.js';
import { announceOperation, requireReachable, type OperationParts } from './parts.js';

/** "the last 4 KiB the agent sent" */
export const OUTPUT_BYTES = 4096;
/** A logs operation's output: the agent's last 200 journal lines, which 4 KiB would cut to a few. */
export const LOG_OUTPUT_BYTES = 64 * 1024;

/**
 * The last `bytes` of a text in UTF-8, cut at a character boundary; `wholeLines`: cut where a line
 * starts, so the first line kept is never half a line (unless one line alone is longer than that).
 */
export function lastBytes(text: string, bytes = OUTPUT_BYTES, wholeLines = false): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return text;
  let start = buf.length - bytes;
  if (wholeLines && buf[start - 1] !== 0x0a) {
    const newline = buf.indexOf(0x0a, start);
    if (newline !== -1 && newline + 1 < buf.length) return buf.subarray(newline + 1).toString('utf8');
  }
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString('utf8');
}

/** What is kept of an operation's output: a script's "output as for guest actions (last 64 KiB kept)". */
const keptOutput = (type: Operation['type'], output: string) =>
  type === 'logs' ? lastBytes(output, LOG_OUTPUT_BYTES, true) : type === 'script' ? lastBytes(output, LOG_OUTPUT_BYTES) : lastBytes(output);

/** Operations only `hosts.manage` asks for, and so only it cancels. */
const HOSTS_MANAGE_TYPES = new Set<Operation['type']>(['upgrade', 'download', 'upload']);

export type Operations = ReturnType<typeof createOperations>;

/**
 * Operations as people and agents meet them: the list and one operation, cancelling one not yet
 * sent, log requests, the command poll, and the agent's result (idempotent: a retry changes nothing).
 */
export function createOperations(parts: OperationParts, channel: CommandChannel) {
  const { ctx, repo, ops, audit } = parts;

  const cancelTx = ctx.transaction((id: string, who: Who, managesHosts: boolean, now: number) => {
    const op = ops.byId(id);
    if (!op) throw notFound('operation not found');
    if (op.type === 'uninstall') throw conflict('a host removal cannot be cancelled; an administrator may force it (DELETE /api/hosts/:id?force=true)');
    // An upgrade, a download or a push is asked for with hosts.manage; it is called off with the same.
    if (HOSTS_MANAGE_TYPES.has(op.type) && !managesHosts) throw forbidden('forbidden');
    if (op.status === 'sent') throw conflict('the operation was already sent to the agent');
    if (op.status !== 'pending') throw conflict('the operation has already ended');
    ops.finish(op.id, 'pending', 'cancelled', now);
    kindOf(op.type).ended(parts, op, 'cancelled', now);
    const host = repo.hostById(op.host_id)!;
    const what = op.action ? `${op.action} of guest ${op.vmid}` : op.type;
    audit.write({
      action: 'host.operation_cancel',
      subject: { type: 'operation', id: op.id, name: what },
      summary: `${nameOf()} cancelled the ${what} on ${host.hostname}`,
      detail: { host: host.hostname, operation_id: op.id, type: op.type, ...(op.vmid !== null ? { vmid: op.vmid, action: op.action } : {}) },
    });
    announceOperation(parts, op.id);
  });

  const logsTx = ctx.transaction((hostId: number, who: Who, now: number): string => {
    const host = requireHost(repo, hostId);
    requireReachable(parts, host, now);
    // A request while one waits gets that one: the agent answers it once.
    const id = ops.pendingOf(hostId, 'logs')[0]?.id ?? randomUUID();
    if (!ops.byId(id)) ops.insert({ id, host_id: hostId, type: 'logs', vmid: null, action: null, params: {}, reason: null, requested_by: who.actor, requested_at: now });
    audit.write({
      action: 'host.logs_request',
      subject: { type: 'host', id: String(hostId), name: host.hostname },
      summary: `${nameOf()} asked ${host.hostname} for its agent's logs`,
      detail: { host: host.hostname, operation_id: id },
    });
    announceOperation(parts, id);
    ctx.afterCommit(() => channel.notify(hostId));
    return id;
  });

  const resultTx = ctx.transaction((hostId: number, id: string, body: OperationResult, now: number) => {
    const op = ops.byId(id);
    // "only its own operations, any other → 401 invalid token": the same answer whether it exists or not.
    if (!op || op.host_id !== hostId) throw invalidToken();
    const kind = kindOf(op.type);
    if (!kind.takesResults) throw conflict('this operation takes no result: the agent’s heartbeat settles it');
    // Posted twice, or after it expired: it has ended, and stays as it ended.
    if (op.status !== 'sent') return;
    const status = body.exit_code === 0 ? 'succeeded' : 'failed';
    const reported = body.finished_at === undefined ? NaN : Date.parse(body.finished_at);
    // The agent's clock is believed when it is plausible: not before the command was sent, not ahead of ours.
    const finishedAt = Number.isFinite(reported) && reported >= (op.sent_at ?? 0) && reported <= now ? reported : now;
    if (!ops.finish(op.id, 'sent', status, finishedAt, body.exit_code, keptOutput(op.type, body.output ?? ''))) return;
    kind.ended(parts, op, status, now);
    announceOperation(parts, op.id);
  });

  /** Inside the poll's transaction, with the host's token checked again (it may have been revoked while the poll waited). */
  const takeTx = ctx.transaction((tokenHash: string): AgentCommand[] => {
    const token = repo.hostTokenByHash(tokenHash);
    const host = token && token.revoked_at === null ? repo.hostById(token.host_id) : undefined;
    if (!host || host.state === 'deleted') return [];
    return polledCommandsFor({ ...parts, host, now: ctx.clock.now() });
  });

  return {
    get(id: string, withOutput: boolean): Operation {
      const row = ops.byId(id);
      if (!row) throw notFound('operation not found');
      return presentOperation(row, withOutput);
    },
    list: (query: OperationQuery, withOutput: boolean): Operation[] => ops.list(query).map((row) => presentOperation(row, withOutput)),

    /** DELETE /api/operations/:id: only a pending one; `managesHosts` for an upgrade. */
    cancel: (id: string, who: Who, managesHosts: boolean) => cancelTx(id, who, managesHosts, ctx.clock.now()),

    /** POST /api/hosts/:id/logs */
    requestLogs: (hostId: number, who: Who): OperationAccepted => ({ operation_id: logsTx(hostId, who, ctx.clock.now()), status: 'pending' }),

    /** POST /api/agent/operations/:id/result, by the host whose token it is. */
    result: (hostId: number, id: string, body: OperationResult) => resultTx(hostId, id, body, ctx.clock.now()),

    /** GET /api/agent/commands?wait=N: what is due now, else the first command within `waitS` seconds, else []. */
    poll(hostId: number, tokenHash: string, waitS: number, onGone: (cancel: () => void) => void): Promise<AgentCommand[]> {
      return channel.wait(hostId, waitS * 1000, () => takeTx(tokenHash), onGone);
    },
  };
}
