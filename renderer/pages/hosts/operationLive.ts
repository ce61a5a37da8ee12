import { useLive } from '../../live';
import type { Operation } from '../../../server/contract/operations';

/** What an operation did, in a few words: "stop of 100", "clone of 9000 to 300", "deploy of 301 “web” from 9000", "download of debian.iso to local", "agent logs". */
export function operationWhat(op: Pick<Operation, 'type' | 'action' | 'vmid' | 'params'>): string {
  if (op.type === 'guest.action') {
    const extra = op.action === 'clone' ? ` to ${op.params.new_vmid} “${op.params.name}”` : op.action === 'snapshot' ? ` “${op.params.name}”` : op.action === 'rollback' ? ` to “${op.params.snapshot}”` : '';
    return `${op.action} of ${op.vmid}${extra}`;
  }
  if (op.type === 'deploy') {
    if (op.action === 'rebuild') return `rebuild of ${op.vmid}`;
    const from = op.params.source_volume ?? op.params.source_vmid;
    return `deploy of ${op.vmid}${op.params.name ? ` “${op.params.name}”` : ''}${from ? ` from ${from}` : ''}`;
  }
  if (op.type === 'download') return `download of ${op.params.filename ?? '?'} to ${op.params.storage ?? '?'}`;
  if (op.type === 'upload') return `push of ${op.params.name ?? `file ${op.params.file_id ?? '?'}`} to ${op.params.storage ?? '?'}`;
  if (op.type === 'logs') return 'agent logs';
  if (op.type === 'upgrade') return `agent upgrade to ${op.params.version ?? '?'}`;
  return 'agent uninstall';
}

/** Lays a live `operation.updated` over a list: replaced in place, or added on top when new. */
export function withOperation(list: Operation[], op: Operation): Operation[] {
  const at = list.findIndex((o) => o.id === op.id);
  // The event carries no output: keep what was read before.
  if (at >= 0) return list.map((o, i) => (i === at ? { ...op, ...('output' in o ? { output: o.output } : {}) } : o));
  return [op, ...list];
}

/** Live operations of one host; `reload` when the stream missed events (`reset`). */
export function useLiveOperations(hostId: number, update: (op: Operation) => void, reload: () => void): void {
  useLive(['operation.updated', 'reset'], (event) => {
    if (event.type === 'reset') reload();
    else if (event.data.host_id === hostId) update(event.data);
  });
}
