import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { nameOf, type AuditLog } from '../audit.js';
import type { AppContext } from '../context.js';
import type { CachedFile, FileCache } from '../contract/storage.js';
import { conflict, HttpError, notFound } from '../errors.js';
import { currentContext, withContext } from '../http/request-context.js';
import { isoSeconds } from '../time.js';
import { leastFileBytes, receiveUpload, TEMP_FILE, tooLarge, type Received } from './receive.js';
import { createFileRepo, type FileRow } from './repo.js';
import { createHasher } from './hasher.js';
import { createRoom } from './room.js';

/** What the file cache asks of operations: whether a pending or sent `upload` operation names the file. */
export interface FileCacheDeps {
  inUse: (fileId: number) => boolean;
}

export interface FileCacheOptions {
  /** The cache folder; default `files/` beside the database, or a temp folder for an in-memory one. */
  dir?: string;
}

/** A cached file with the absolute path of its bytes (for the agents' fetch). */
export type CachedFileAt = CachedFile & { path: string };

/** `<data folder>/files`: beside the database, as snapshots/ is. */
export function filesDirectory(dbPath: string): string {
  return path.join(path.dirname(path.resolve(dbPath)), 'files');
}

const SHA256_NAME = /^[0-9a-f]{64}$/;

export const cacheFull = () => new HttpError(507, { error: 'file cache full' });

const present = (row: FileRow): CachedFile => ({
  id: row.id,
  name: row.name,
  size: row.size,
  sha256: row.sha256,
  uploaded_by: row.uploaded_by,
  uploaded_at: row.uploaded_at,
  used_at: isoSeconds(row.used_at),
});

const subject = (row: { id: number; name: string }) => ({ type: 'file', id: String(row.id), name: row.name });
const detailOf = (row: FileRow) => ({ id: row.id, name: row.name, size: row.size, sha256: row.sha256 });

/**
 * The file cache (PRODUCT.md "Host storage, downloads and the file cache"): uploads streamed into
 * `<data folder>/files/`, each content stored once under its SHA-256, the whole held under
 * FLEET_FILE_CACHE_MAX_BYTES by evicting the least recently used files no operation needs.
 * Uploads in flight hold room as their bytes arrive (room.ts).
 */
export function createFileCache(ctx: Pick<AppContext, 'db' | 'clock' | 'config' | 'logger' | 'transaction' | 'afterCommit' | 'commits'>, audit: AuditLog, deps: FileCacheDeps, options: FileCacheOptions = {}) {
  const { clock, config, transaction, afterCommit, commits } = ctx;
  const repo = createFileRepo(ctx.db);
  const cap = config.fileCacheMaxBytes;
  let dir = options.dir ?? (config.dbPath === ':memory:' ? undefined : filesDirectory(config.dbPath));
  let temporaryDir = false;
  const hasher = createHasher();
  const room = createRoom(cap, () => repo.usedBytes(), (bytes) => evictTx(bytes));

  const pathOf = (sha256: string) => path.join(dir!, sha256);
  const folder = (): string => {
    if (!dir) {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-files-'));
      temporaryDir = true;
    }
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  };

  /** Removes what a crash left: temp files of uploads, and files no row names (renamed, then the row not committed). */
  function sweep(): void {
    if (!dir || !fs.existsSync(dir)) return;
    for (const name of fs.readdirSync(dir)) {
      if (TEMP_FILE.test(name) || (SHA256_NAME.test(name) && !repo.bySha256(name))) {
        fs.rmSync(path.join(dir, name), { force: true });
        ctx.logger.warn({ file: name }, `removed ${name} from the file cache: an upload the server did not finish`);
      }
    }
  }

  /**
   * The bytes of a row deleted in the open transaction go once it commits: only then, and only when no
   * row names them (a failed commit brings the row back). Until they are gone they count in the room.
   */
  function unlinkOnCommit(row: FileRow): void {
    const removed = room.removing(row.size);
    const unlink = () => {
      repo.forgetUsedBytes();
      if (!repo.bySha256(row.sha256)) fs.rmSync(pathOf(row.sha256), { force: true });
      removed();
    };
    if (!commits.whenCommitted(unlink)) afterCommit(unlink);
  }

  /** Bytes of the files no eviction may take: those an operation needs. */
  const neededBytes = () => repo.leastRecentlyUsed().reduce((sum, row) => (deps.inUse(row.id) ? sum + row.size : sum), 0);

  const evictTx = transaction((need: number): void => {
    const chosen: FileRow[] = [];
    let freed = 0;
    for (const row of repo.leastRecentlyUsed()) {
      if (freed >= need) break;
      if (deps.inUse(row.id)) continue;
      chosen.push(row);
      freed += row.size;
    }
    // Nothing is evicted for an upload that would not fit anyway.
    if (freed < need) throw cacheFull();
    const by = nameOf();
    for (const row of chosen) {
      repo.remove(row.id);
      audit.write({
        action: 'file.evict',
        subject: subject(row),
        summary: `file “${row.name}” was evicted from the cache (least recently used) to make room for an upload by ${by}`,
        detail: { ...detailOf(row), used_at: isoSeconds(row.used_at) },
      });
    }
    for (const row of chosen) unlinkOnCommit(row);
  });

  /** Keeps a received file: a new row and its bytes under their hash, or the row of the same bytes, refreshed. */
  const keepTx = transaction((received: Received, by: string): { file: FileRow; kept: boolean } => {
    const now = clock.now();
    const existing = repo.bySha256(received.sha256);
    if (existing) {
      repo.touch(existing.id, now);
      const file = repo.byId(existing.id)!;
      audit.write({
        action: 'file.upload',
        subject: subject(file),
        summary: `${nameOf()} uploaded “${received.name}”, the same bytes as cached file “${file.name}”: kept once`,
        detail: { ...detailOf(file), uploaded_name: received.name, already_cached: true },
      });
      return { file, kept: false };
    }
    const row = { name: received.name, size: received.size, sha256: received.sha256, uploaded_by: by, uploaded_at: isoSeconds(now), used_at: now };
    const id = repo.insert(row);
    fs.renameSync(received.tempPath, pathOf(received.sha256));
    const file = { id, ...row };
    audit.write({ action: 'file.upload', subject: subject(file), summary: `${nameOf()} uploaded file “${file.name}” (${file.size} bytes)`, detail: detailOf(file) });
    return { file, kept: true };
  });

  const removeTx = transaction((id: number): void => {
    const row = repo.byId(id);
    if (!row) throw notFound('file not found');
    if (deps.inUse(id)) throw conflict('file is needed by a push that has not finished');
    repo.remove(id);
    audit.write({ action: 'file.delete', subject: subject(row), summary: `${nameOf()} deleted file “${row.name}” from the cache`, detail: detailOf(row) });
    unlinkOnCommit(row);
  });

  sweep();

  return {
    list(): FileCache {
      return { files: repo.all().map(present), used_bytes: repo.usedBytes(), cap_bytes: cap, max_upload_bytes: config.uploadMaxBytes };
    },

    /** POST /api/files: the request's one file part, kept (201 with its record) or refused with nothing left behind. */
    async upload(req: IncomingMessage, by: string): Promise<CachedFile> {
      const least = leastFileBytes(req);
      if (least !== undefined && least > config.uploadMaxBytes) throw tooLarge(config.uploadMaxBytes);
      // Evicting for an upload that cannot fit even with every file that may go gone would lose them for nothing.
      if (least !== undefined && neededBytes() + room.pending() + least > cap) throw cacheFull();
      const reservation = room.reserve();
      // Room is taken from the request's stream events: evictions are recorded as this request's.
      const context = currentContext();
      try {
        const received = await receiveUpload(req, {
          dir: folder(),
          maxBytes: config.uploadMaxBytes,
          grow: (size) => withContext(context, () => reservation.grow(size)),
          failing: reservation.failing,
          hasher,
        });
        try {
          const { file, kept } = keepTx(received, by);
          if (!kept) await fs.promises.rm(received.tempPath, { force: true });
          return present(file);
        } catch (err) {
          await fs.promises.rm(received.tempPath, { force: true });
          // Renamed, then the row rolled back: the bytes go with it.
          if (!repo.bySha256(received.sha256)) await fs.promises.rm(pathOf(received.sha256), { force: true });
          throw err;
        }
      } finally {
        reservation.close();
      }
    },

    remove(id: number): void {
      removeTx(id);
    },

    /** The file and where its bytes are; undefined when there is no such file. */
    get(id: number): CachedFileAt | undefined {
      const row = repo.byId(id);
      return row && dir ? { ...present(row), path: pathOf(row.sha256) } : undefined;
    },

    /** A push used the file: it is the most recently used now. */
    touch(id: number): void {
      repo.touch(id, clock.now());
    },

    /** Removes the temp folder an in-memory database's cache was given. */
    close(): void {
      if (temporaryDir && dir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type FileCacheService = ReturnType<typeof createFileCache>;
