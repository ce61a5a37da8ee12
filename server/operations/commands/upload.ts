import type { UploadCommand } from '../../contract/operations.js';
import type { OperationRow } from '../repo.js';
import { queuedKind } from './queued.js';

/** At least an hour for a push's result: the agent fetches the file, hashes it and moves it into place. */
export const UPLOAD_RESULT_MIN_MS = 60 * 60 * 1000;
/** And more for a large file: 2 s per MiB, as if the host's line gave 512 KiB/s (16 GiB: about 9 h). */
const MS_PER_MIB = 2000;

type Params = Omit<UploadCommand, 'type' | 'operation_id'>;

const paramsOf = (op: OperationRow) => JSON.parse(op.params) as Params;

/** When a push's result is due after it was sent: size-dependent, never under an hour. */
export const uploadResultMs = (size: number) => Math.max(UPLOAD_RESULT_MIN_MS, Math.ceil(size / 2 ** 20) * MS_PER_MIB);

/**
 * POST /api/hosts/:id/storage/:storage/files (server/operations/storage-ops.ts): the agent fetches
 * GET /api/agent/files/<file_id> with its host token, checks size and SHA-256 and moves it into place.
 */
export const upload = queuedKind<UploadCommand>({
  type: 'upload',
  resultDueMs: (op) => uploadResultMs(paramsOf(op).size),
  render(op) {
    const p = paramsOf(op);
    return { type: 'upload', operation_id: op.id, file_id: p.file_id, name: p.name, size: p.size, sha256: p.sha256, storage: p.storage, content: p.content, replace: p.replace };
  },
});
