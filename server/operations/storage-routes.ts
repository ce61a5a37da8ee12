import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { DownloadBody, PushBody, STORAGE_NAME } from '../contract/inputs/storage.js';
import { HttpError, notFound, validationFailed } from '../errors.js';
import { agentCredentialOf } from '../http/locals.js';
import { actorName, currentContext } from '../http/request-context.js';
import type { RouteTable } from '../http/routes.js';
import { parseByteRange } from './byte-range.js';
import type { StorageOperations } from './storage-ops.js';

const who = () => ({ actor: actorName(currentContext().actor) });

/** The `:storage` of a path: a Proxmox storage id, else 400 naming it. */
function storageParam(value: string): string {
  if (!STORAGE_NAME.test(value)) throw validationFailed([{ field: 'storage', message: 'must be a storage id: a letter, then letters, digits, _ . - (at most 64)' }]);
  return value;
}

/**
 * Downloads onto a host's storage, pushes of cached files to it, and the agent's fetch of a pushed
 * file (PRODUCT.md "Host storage, downloads and the file cache").
 */
export function registerStorageOperationRoutes(routes: RouteTable, storage: StorageOperations): void {
  routes.on('POST /api/hosts/:id/storage/:storage/downloads', { access: 'hosts.manage', body: DownloadBody }, (req, res, { params, body }) =>
    storage.download(params.id, storageParam(params.storage), body, who()),
  );

  routes.on('POST /api/hosts/:id/storage/:storage/files', { access: 'hosts.manage', body: PushBody }, (req, res, { params, body }) =>
    storage.push(params.id, storageParam(params.storage), body, who()),
  );

  // Streamed from the cache, never read whole; `Range` resumes a fetch that was cut off.
  routes.on('GET /api/agent/files/:file_id', { access: 'machine', credentials: ['host'] }, async (req, res, { params }) => {
    const file = storage.fileFor(agentCredentialOf(res, 'host').id, params.file_id);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file.path, 'r');
    } catch {
      throw notFound('file is no longer in the file cache');
    }
    let size: number;
    try {
      size = (await handle.stat()).size;
    } catch (err) {
      await handle.close();
      throw err;
    }
    const range = parseByteRange(req.get('range'), size);
    if (range === 'unsatisfiable') {
      await handle.close();
      throw new HttpError(416, { error: 'range not satisfiable' }, { 'Content-Range': `bytes */${size}` });
    }
    const { start, end } = range ?? { start: 0, end: size - 1 };
    res.status(range ? 206 : 200).set({
      'content-type': 'application/octet-stream',
      'content-length': String(end - start + 1),
      etag: `"${file.sha256}"`,
      'accept-ranges': 'bytes',
      'cache-control': 'no-store',
      ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === 'HEAD' || size === 0) {
      await handle.close();
      res.end();
      return;
    }
    // A fetch the agent cuts off ends the read too (pipeline destroys both); what it got, it resumes with Range.
    await pipeline(handle.createReadStream({ start, end }), res).catch(() => undefined);
  });
}
