import { answer, input, route } from '../route.js';
import type { OperationAccepted } from '../operations.js';
import type { DownloadInput, PushInput, StorageVolumesUpload } from '../inputs/storage.js';
import type { CachedFile, FileCache, HostStorage } from '../storage.js';

/** Host storage, downloads onto hosts, and the file cache (PRODUCT.md "Host storage, downloads and the file cache"). */
export const storageRoutes = {
  'GET /api/hosts/:id/storage': route({ ids: ['id'], answers: [answer<HostStorage[]>(200, "The host's storages with their volumes")] }),
  'POST /api/agent/storage': route({ body: input<StorageVolumesUpload>(), answers: [answer(204, "Kept: the storage's volumes of content iso, vztmpl, snippets and import")] }),
  'POST /api/hosts/:id/storage/:storage/downloads': route({
    ids: ['id'],
    body: input<DownloadInput>(),
    answers: [answer<OperationAccepted>(202, 'A `download` operation: the agent asks Proxmox to fetch the URL (409 for a storage that does not hold that content)')],
  }),
  'POST /api/hosts/:id/storage/:storage/files': route({
    ids: ['id'],
    body: input<PushInput>(),
    answers: [answer<OperationAccepted>(202, 'An `upload` operation: the agent fetches the cached file and puts it on the storage')],
  }),
  'POST /api/files': route({
    answers: [answer<CachedFile>(201, 'The cached file (multipart/form-data with one `file` part; 413 over FLEET_UPLOAD_MAX_BYTES, 507 when the cache is full)')],
  }),
  'GET /api/files': route({ answers: [answer<FileCache>(200, 'The file cache: its files, their total size and the cap')] }),
  'DELETE /api/files/:id': route({ ids: ['id'], answers: [answer(204, 'Deleted (409 while an operation needs it)')] }),
  'GET /api/agent/files/:file_id': route({
    ids: ['file_id'],
    answers: [answer(200, "The file's bytes, for a host with a pending or sent upload of it (206 for a Range)", 'application/octet-stream')],
  }),
} as const;
