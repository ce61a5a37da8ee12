import { nameOf } from '../audit.js';
import { FILE_NAME, type DownloadRequest, type PushRequest, type StorageReport } from '../contract/inputs/storage.js';
import type { OperationAccepted } from '../contract/operations.js';
import type { CachedFile } from '../contract/storage.js';
import { conflict, invalidToken, notFound, validationFailed } from '../errors.js';
import { hostSubject, requireHost, type Who } from '../hosts/parts.js';
import type { HostRow } from '../hosts/repo.js';
import type { CommandChannel } from './command-channel.js';
import { queueOperation, requireReachable, type OperationParts } from './parts.js';

export const PUSH_RUNNING = 'a push of this file to this storage is already running';

/** What the file cache (server/files) lends operations: a cached file with where its bytes are, and "used now" for its eviction order. */
export interface CachedFiles {
  get(id: number): (CachedFile & { path: string }) | undefined;
  touch(id: number): void;
}

/** What operations need of a host's storages (server/hosts/storage.ts): one storage of its last heartbeat. */
export type StorageOf = (hostId: number, storage: string) => StorageReport | undefined;

export type StorageOperations = ReturnType<typeof createStorageOperations>;

/**
 * Downloads onto a host's storage and pushes of cached files to it (PRODUCT.md "Host storage,
 * downloads and the file cache"), each an operation whose rules are checked inside the transaction
 * that makes it: ten parallel pushes of one file to one storage make one operation. The agent's
 * fetch of a pushed file is allowed only while its host has that push pending or sent.
 */
export function createStorageOperations(parts: OperationParts, channel: CommandChannel, storageOf: StorageOf, files: CachedFiles) {
  const { ctx, repo, ops, audit } = parts;

  /** The storage, listed by the host's last heartbeat, active, and holding `content` (else 409 naming it). */
  function requireStorage(host: HostRow, storage: string, content: string): void {
    const found = storageOf(host.id, storage);
    if (!found) throw conflict(`storage ${storage} is not one ${host.hostname} listed in its last heartbeat`);
    if (!found.content.includes(content)) throw conflict(`storage ${storage} does not hold ${content}`);
    if (!found.active) throw conflict(`storage ${storage} is not active on ${host.hostname}`);
  }

  const queue = (host: HostRow, type: 'download' | 'upload', params: Record<string, unknown>, who: Who, now: number): string =>
    queueOperation(parts, channel, { host_id: host.id, type, vmid: null, action: null, params, reason: null, requested_by: who.actor, requested_at: now });

  const downloadTx = ctx.transaction((hostId: number, storage: string, body: DownloadRequest, who: Who, now: number): string => {
    const host = requireHost(repo, hostId);
    requireReachable(parts, host, now);
    requireStorage(host, storage, body.content);
    const params = { storage, ...body };
    const id = queue(host, 'download', params, who, now);
    audit.write({
      action: 'host.storage_download',
      subject: hostSubject(host),
      summary: `${nameOf()} asked ${host.hostname} to download ${body.filename} into storage ${storage}`,
      detail: { host: host.hostname, operation_id: id, ...params },
    });
    return id;
  });

  const pushTx = ctx.transaction((hostId: number, storage: string, body: PushRequest, who: Who, now: number): string => {
    const host = requireHost(repo, hostId);
    requireReachable(parts, host, now);
    requireStorage(host, storage, body.content);
    const file = files.get(body.file_id);
    if (!file) throw validationFailed([{ field: 'file_id', message: `file ${body.file_id} is not in the file cache` }]);
    // The agent writes the file under this name into the storage's folder: never a path.
    if (!FILE_NAME.test(file.name)) throw validationFailed([{ field: 'file_id', message: `file ${body.file_id}'s name cannot name a file on a storage: upload it under a plain file name` }]);
    if (ops.uploadRunning(hostId, body.file_id, storage)) throw conflict(PUSH_RUNNING);
    const params = { file_id: file.id, name: file.name, size: file.size, sha256: file.sha256, storage, content: body.content, replace: body.replace };
    const id = queue(host, 'upload', params, who, now);
    files.touch(file.id);
    audit.write({
      action: 'host.storage_push',
      subject: hostSubject(host),
      summary: `${nameOf()} asked ${host.hostname} to put ${file.name} into storage ${storage}${body.replace ? ', replacing a file of that name' : ''}`,
      detail: { host: host.hostname, operation_id: id, ...params },
    });
    return id;
  });

  return {
    /** POST /api/hosts/:id/storage/:storage/downloads */
    download: (hostId: number, storage: string, body: DownloadRequest, who: Who): OperationAccepted => ({
      operation_id: downloadTx(hostId, storage, body, who, ctx.clock.now()),
      status: 'pending',
    }),

    /** POST /api/hosts/:id/storage/:storage/files */
    push: (hostId: number, storage: string, body: PushRequest, who: Who): OperationAccepted => ({
      operation_id: pushTx(hostId, storage, body, who, ctx.clock.now()),
      status: 'pending',
    }),

    /** For the file cache: a pending or sent push needs the file, so it is neither evicted nor deleted. */
    inUse: (fileId: number): boolean => ops.uploadOpen(fileId),

    /**
     * GET /api/agent/files/:file_id: the file, for a host with a pending or sent push of it. Any other
     * host gets the answer of a refused token, whether the file exists or not.
     */
    fileFor(hostId: number, fileId: number): CachedFile & { path: string } {
      if (!ops.uploadOpenOn(hostId, fileId)) throw invalidToken();
      const file = files.get(fileId);
      if (!file) throw notFound('file is no longer in the file cache');
      return file;
    },
  };
}
