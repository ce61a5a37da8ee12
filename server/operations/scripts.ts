import { nameOf } from '../audit.js';
import type { OperationAccepted } from '../contract/operations.js';
import { SCRIPT_TIMEOUT_DEFAULT_S, SCRIPT_TIMEOUT_MAX_S } from '../contract/scripts.js';
import { conflict, notFound, validationFailed } from '../errors.js';
import { requireHost, type Who } from '../hosts/parts.js';
import type { CommandChannel } from './command-channel.js';
import { queueOperation, requireReachable, type OperationParts } from './parts.js';
import { wrongTarget, type ScriptParams } from './script-source.js';

export type ScriptRuns = ReturnType<typeof createScriptRuns>;

/**
 * Script runs (PRODUCT.md "A script runs only in a campaign"): campaigns queue one operation of type
 * `script` per target through `request`, inside their own transaction when they call it in one.
 * Every rule is checked inside the transaction that makes the operation, so parallel requests for
 * one guest give exactly one (the one-open-operation-per-guest index holds it too). The body goes
 * out only in the command, read when it is handed out (server/operations/commands/script.ts).
 */
export function createScriptRuns(parts: OperationParts, channel: CommandChannel) {
  const { ctx, repo, ops, audit, scripts } = parts;

  const requestTx = ctx.transaction((hostId: number, vmid: number | null, scriptId: number, timeoutS: number, who: Who, now: number): string => {
    const script = scripts.get(scriptId);
    if (!script) throw notFound('script not found');
    const host = requireHost(repo, hostId);
    const guest = vmid === null ? undefined : repo.guestOf(hostId, vmid);
    if (vmid !== null && (!guest || host.state === 'deleted')) throw notFound('guest not found');
    if ((vmid === null) !== (script.runs_on === 'host')) throw conflict(wrongTarget(script, vmid));
    requireReachable(parts, host, now);
    if (guest) {
      if (ops.openForGuest(hostId, guest.vmid)) throw conflict('an operation is already pending for this guest');
      if (guest.lock) throw conflict(`guest is locked (${guest.lock})`);
      if (guest.template) throw conflict('guest is a template');
      // pct exec and the guest agent need it running; said now rather than by the host minutes later.
      if (guest.status !== 'running') throw conflict(`guest is not running (${guest.status || 'unknown'})`);
    }
    const params: ScriptParams = { script_id: script.id, script_name: script.name, timeout_s: timeoutS };
    const id = queueOperation(parts, channel, {
      host_id: hostId,
      type: 'script',
      vmid,
      action: null,
      params: { ...params },
      reason: null,
      requested_by: who.actor,
      requested_at: now,
    });
    const where = guest ? `guest ${guest.vmid}${guest.name ? ` “${guest.name}”` : ''} on ${host.hostname}` : `host ${host.hostname}`;
    audit.write({
      action: 'host.script_run',
      subject: guest ? { type: 'guest', id: `${hostId}/${guest.vmid}`, name: guest.name || null } : { type: 'host', id: String(hostId), name: host.hostname },
      summary: `${nameOf()} asked for script “${script.name}” on ${where}`,
      // The script by its hash and size, never its body.
      detail: { host: host.hostname, ...(vmid !== null ? { vmid } : {}), operation_id: id, ...params, sha256: script.sha256, size: script.size },
    });
    return id;
  });

  return {
    /**
     * Queues one `script` operation on the host (`vmid: null`) or in one of its guests: 404 for an
     * unknown script, host or guest; 409 for a script of the other kind, an offline host, a guest
     * with an open operation, locked, a template or not running; 400 for `timeoutS` outside 1–3600.
     */
    request(hostId: number, vmid: number | null, scriptId: number, timeoutS: number | undefined, who: Who): OperationAccepted {
      const timeout = timeoutS ?? SCRIPT_TIMEOUT_DEFAULT_S;
      if (!Number.isInteger(timeout) || timeout < 1 || timeout > SCRIPT_TIMEOUT_MAX_S) {
        throw validationFailed([{ field: 'timeout_s', message: `must be a whole number from 1 to ${SCRIPT_TIMEOUT_MAX_S}` }]);
      }
      try {
        return { operation_id: requestTx(hostId, vmid, scriptId, timeout, who, ctx.clock.now()), status: 'pending' };
      } catch (err) {
        // The index behind the check: only a request racing another process's could meet it.
        if ((err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('an operation is already pending for this guest');
        throw err;
      }
    },
  };
}
