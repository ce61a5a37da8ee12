import { nameOf } from '../audit.js';
import { randomUUID } from 'node:crypto';
import { conflict } from '../errors.js';
import { announceStatus, hostSubject, requireHost, type HostParts, type Who } from './parts.js';
import type { DeletionRow, HostRepo, HostRow } from './repo.js';
import { issueToken } from './tokens.js';

/**
 * Removing a host (PRODUCT.md "Deletion"): an operation is made, the next heartbeat carries the
 * uninstall command with the operation's own receipt token, and the agent's receipt marks the host
 * `deleted`. An offline host's removal stays pending until an administrator forces it.
 */

/** The receipt token "expires after 7 days" (counted from when the uninstall command is delivered). */
export const RECEIPT_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

/** The removal that waits for this host's next heartbeat, if any. */
export function pendingRemoval(repo: HostRepo, host: HostRow): DeletionRow | undefined {
  if (host.state !== 'deleting') return undefined;
  const deletion = repo.latestDeletionOf(host.id);
  return deletion?.status === 'pending' ? deletion : undefined;
}

/** Hands the removal to the agent: returns its new receipt token; "from then on the host token is revoked". */
export function deliverRemoval(repo: HostRepo, deletion: DeletionRow, now: number): string {
  const receipt = issueToken('receipt');
  repo.deliverDeletion(deletion.id, receipt.hash, now + RECEIPT_LIFETIME_MS, now);
  repo.revokeHostTokens(deletion.host_id, now);
  return receipt.token;
}

/** `announceOperation`: operation.updated for the removal's operation (server/operations). */
export function createRemoval(parts: HostParts, announceOperation: (id: string) => void) {
  const { ctx, repo, audit } = parts;

  const removeTx = ctx.transaction((hostId: number, force: boolean, who: Who, now: number): DeletionRow => {
    const host = requireHost(repo, hostId);
    if (host.state === 'deleted') throw conflict('host already deleted');
    let deletion = repo.latestDeletionOf(hostId);
    // Asking again while one is under way gives the same operation.
    if (host.state !== 'deleting' || !deletion || (deletion.status !== 'pending' && deletion.status !== 'delivered')) {
      const id = randomUUID();
      repo.insertDeletion(id, hostId, who.actor, now);
      repo.setState(hostId, 'deleting', null);
      deletion = repo.deletionById(id)!;
    }
    if (force) {
      repo.forceDeletions(hostId, now);
      repo.revokeHostTokens(hostId, now);
      repo.setState(hostId, 'deleted', now);
    }
    audit.write({ action: force ? 'host.force_delete' : 'host.delete', subject: hostSubject(host), summary: force ? `${nameOf()} force-removed host ${host.hostname} (no receipt)` : `${nameOf()} started removing host ${host.hostname}`, detail: { host: host.hostname, operation_id: deletion.id } });
    announceStatus(parts, hostId);
    announceOperation(deletion.id);
    return repo.deletionById(deletion.id)!;
  });

  const receiptTx = ctx.transaction((deletion: DeletionRow, ip: string | null, now: number): void => {
    if (!repo.confirmDeletion(deletion.id, now)) return;
    repo.revokeHostTokens(deletion.host_id, now);
    repo.setState(deletion.host_id, 'deleted', now);
    const host = repo.hostById(deletion.host_id)!;
    audit.write({ actor: { type: 'agent', id: host.id, name: host.hostname }, ip, action: 'host.deleted', subject: hostSubject(host), summary: `host ${host.hostname} confirmed its removal`, detail: { operation_id: deletion.id } });
    announceStatus(parts, host.id);
    announceOperation(deletion.id);
  });

  return {
    remove: (hostId: number, force: boolean, who: Who) => removeTx(hostId, force, who, ctx.clock.now()),

    /** The uninstall worker's receipt; a retry of a confirmed one changes nothing. */
    confirmReceipt(deletion: DeletionRow, ip: string | null): void {
      if (deletion.status === 'confirmed') return;
      receiptTx(deletion, ip, ctx.clock.now());
    },
  };
}
