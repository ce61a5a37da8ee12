import type { DownloadCommand } from '../../contract/operations.js';
import type { DownloadRequest } from '../../contract/inputs/storage.js';
import { queuedKind } from './queued.js';

/** Proxmox's download-url may fetch gigabytes over a slow line: its result is due 2 h after it was sent. */
export const DOWNLOAD_RESULT_MS = 2 * 60 * 60 * 1000;

type Params = DownloadRequest & { storage: string };

/**
 * POST /api/hosts/:id/storage/:storage/downloads (server/operations/storage-ops.ts): the agent runs
 * `pvesh create /nodes/<node>/storage/<storage>/download-url` with these values; Proxmox fetches and verifies.
 */
export const download = queuedKind<DownloadCommand>({
  type: 'download',
  resultDueMs: () => DOWNLOAD_RESULT_MS,
  render(op) {
    const p = JSON.parse(op.params) as Params;
    return {
      type: 'download',
      operation_id: op.id,
      storage: p.storage,
      url: p.url,
      filename: p.filename,
      content: p.content,
      ...(p.checksum !== undefined ? { checksum: p.checksum, checksum_algorithm: p.checksum_algorithm! } : {}),
    };
  },
});
