import type { UninstallCommand } from '../../contract/hosts.js';
import type { DeletionRow } from '../../hosts/repo.js';
import { announceOperation } from '../parts.js';
import { deliverRemoval, pendingRemoval } from '../../hosts/removal.js';
import { commandKind } from './types.js';

/** A removal asked for in DELETE /api/hosts/:id (server/hosts/removal.ts), delivered at the next heartbeat. */
export const uninstall = commandKind<UninstallCommand, DeletionRow, { deletion: DeletionRow; receiptToken: string }>({
  due: ({ repo, host }) => {
    const deletion = pendingRemoval(repo, host);
    return deletion ? [deletion] : [];
  },
  deliver(contact, deletion) {
    const receiptToken = deliverRemoval(contact.repo, deletion, contact.now);
    announceOperation(contact, deletion.id);
    return { deletion, receiptToken };
  },
  render: ({ deletion, receiptToken }) => ({ type: 'uninstall', operation_id: deletion.id, receipt_token: receiptToken }),
  // The host page shows the removal delivered and the host token gone.
  announcesStatus: true,
  // "No operation stays sent forever": once the receipt token has expired nothing can confirm the
  // removal; it ends as expired, the host stays `deleting`, and an administrator may force it.
  sweep(parts, now) {
    const { ctx, repo } = parts;
    const expire = ctx.transaction((id: string) => {
      const deletion = repo.deletionById(id);
      if (!deletion || !repo.expireDeletion(id, now)) return;
      announceOperation(parts, id);
      parts.announceStatus(deletion.host_id);
    });
    for (const id of repo.receiptsExpired(now)) expire(id);
  },
});
