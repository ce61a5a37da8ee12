import type { UninstallCommand } from '../../contract/hosts.js';
import type { DeletionRow } from '../repo.js';
import { announceOperation } from '../parts.js';
import { deliverRemoval, pendingRemoval } from '../removal.js';
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
});
