import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { FILE_NAME } from '../contract/inputs/storage.js';
import { collectYoungGarbage } from '../memory.js';
import type { Hasher, UploadHash } from './hasher.js';
import { badRequest, HttpError, unsupportedMediaType, validationFailed } from '../errors.js';

/** A file part written whole to its temp file. */
export interface Received {
  name: string;
  size: number;
  sha256: string;
  /** The temp file in the cache folder: the caller renames or removes it. */
  tempPath: string;
}

export interface ReceiveOptions {
  /** Where the temp file is written: the cache folder itself, so that keeping it is a rename. */
  dir: string;
  /** FLEET_UPLOAD_MAX_BYTES: one byte more is 413. */
  maxBytes: number;
  /**
   * Called with the running size before each chunk is written; throws (507) when the cache cannot hold
   * that much, or answers a promise to wait on (the chunk is held, and with it the request).
   */
  grow(size: number): void | Promise<void>;
  /** Told at once when the upload fails, before its temp file is removed. */
  failing(): void;
  /** Where the SHA-256 is computed (server/files/hasher.ts). */
  hasher: Hasher;
}

export const TEMP_FILE = /^\.upload-[0-9a-f-]{36}\.partial$/;

/** More multipart framing (boundaries, part headers, small fields) than an honest upload of one file carries. */
const FRAMING_BYTES = 64 * 1024;

/**
 * The least the file of this request can be, from its declared Content-Length less the framing around
 * it: a request that cannot fit is refused before it is read. Undefined for a body of unknown length.
 */
export function leastFileBytes(req: IncomingMessage): number | undefined {
  const declared = req.headers['content-length'];
  return declared !== undefined && /^\d{1,16}$/.test(declared) ? Math.max(0, Number(declared) - FRAMING_BYTES) : undefined;
}

const fileError = (message: string) => validationFailed([{ field: 'file', message }]);
export const tooLarge = (maxBytes: number) => new HttpError(413, { error: `file too large: at most ${maxBytes} bytes` });
export const aborted = () => Object.assign(new Error('upload aborted by the client'), { aborted: true });

/**
 * Reads a `multipart/form-data` request with one file part named `file` (busboy), streaming the part
 * to a temp file in `dir` while its SHA-256 is computed: never more of it in memory than the streams'
 * buffers, as the write stream's backpressure pauses busboy, and busboy the request. On any failure
 * (bad input, too large, the cache full, the client gone) the request is no longer read, the temp file
 * is removed, and then the promise rejects: nothing is left behind once the caller hears of it.
 */
/** The buffer of the file part's stream and of the temp file's writes: a socket read's size (the default, 16 KiB, cuts each read in four). */
const CHUNK = 64 * 1024;

/** How many bytes of an upload pass between two young-generation collections (see collectYoungGarbage). */
const SCAVENGE_EVERY = 4 * 1024 * 1024;

/**
 * The temp file of one upload: each batch of chunks is counted against the limit and the cache's room,
 * hashed (on the hasher's thread) while it is written with one `writev` to the file it holds open:
 * one stage between busboy and the
 * disk, where a counting Transform and a write stream were two, each with a queue of its own.
 */
class TempFile extends Writable {
  size = 0;
  private fd: number | undefined;
  private readonly opened: Promise<number | undefined>;
  private readonly hash: UploadHash;
  private closing: Promise<void> | undefined;

  constructor(
    file: string,
    private readonly options: Pick<ReceiveOptions, 'maxBytes' | 'grow' | 'hasher'>,
  ) {
    super({ highWaterMark: CHUNK });
    this.hash = options.hasher.open();
    this.opened = new Promise((resolve, reject) => fs.open(file, 'wx', 0o600, (err, fd) => (err ? reject(err) : resolve((this.fd = fd)))));
  }

  override _construct(done: (err?: Error | null) => void): void {
    this.opened.then(() => done(), done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (err?: Error | null) => void): void {
    let size = this.size;
    for (const { chunk } of chunks) size += chunk.length;
    if (size > this.options.maxBytes) return done(tooLarge(this.options.maxBytes));
    const write = () => {
      if (Math.floor(size / SCAVENGE_EVERY) > Math.floor(this.size / SCAVENGE_EVERY)) collectYoungGarbage();
      this.size = size;
      const buffers = chunks.map(({ chunk }) => chunk);
      // Hashed (on the hasher's thread) while it is written; the next batch waits for both.
      const hashed = this.hash.update(buffers);
      // Its failure reaches `done` below, unless the write's came first: never unhandled.
      hashed.catch(() => undefined);
      writeAll(this.fd!, buffers, (err) => (err ? done(err) : hashed.then(() => done(), done)));
    };
    let room: void | Promise<void>;
    try {
      room = this.options.grow(size);
    } catch (err) {
      return done(err as Error);
    }
    if (room) room.then(write, done);
    else write();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.close().then(() => done(), done);
  }

  sha256(): Promise<string> {
    return this.hash.digest();
  }

  /** Stops the writes and closes the file (once). */
  discard(): Promise<void> {
    this.hash.drop();
    this.destroy();
    return this.close();
  }

  private close(): Promise<void> {
    // Opening may still be under way: the file is closed once it is open.
    this.closing ??= this.opened.then(
      (fd) => new Promise<void>((resolve) => fs.close(fd!, () => resolve())),
      () => undefined,
    );
    return this.closing;
  }
}

/** `fs.writev` until every byte is written (a short write leaves the rest). */
function writeAll(fd: number, buffers: Buffer[], done: (err?: Error | null) => void): void {
  fs.writev(fd, buffers, (err, written) => {
    if (err) return done(err);
    let rest = written;
    while (buffers.length > 0 && rest >= buffers[0]!.length) rest -= buffers.shift()!.length;
    if (buffers.length === 0) return done();
    buffers[0] = buffers[0]!.subarray(rest);
    writeAll(fd, buffers, done);
  });
}

export function receiveUpload(req: IncomingMessage, options: ReceiveOptions): Promise<Received> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    // Another media type is the wrong kind of body (415, as the JSON routes answer a body they cannot read).
    if (!/^multipart\/form-data\s*;/i.test(req.headers['content-type'] ?? '')) {
      reject(unsupportedMediaType('the body must be multipart/form-data with one file part named file'));
      return;
    }
    try {
      // preservePath: busboy would otherwise keep only the base name; a name with a path is refused instead.
      parser = busboy({ headers: req.headers, preservePath: true, fileHwm: CHUNK, limits: { files: 1, fields: 20, fieldSize: 1024, parts: 21, headerPairs: 20 } });
    } catch {
      reject(badRequest('the body must be multipart/form-data with one file part named file'));
      return;
    }
    let settled = false;
    let written: Promise<Omit<Received, 'name'>> | undefined;
    let name = '';
    let cleanup: () => Promise<void> = async () => {};

    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      options.failing();
      req.unpipe(parser);
      parser.removeAllListeners('file');
      void cleanup().then(
        () => reject(err),
        () => reject(err),
      );
    };
    const succeed = async () => {
      if (settled) return;
      if (!written) return fail(fileError('is missing: send one part named file, with a file name'));
      try {
        const result = await written;
        if (!settled) {
          settled = true;
          resolve({ name, ...result });
        }
      } catch (err) {
        fail(err);
      }
    };

    parser.on('file', (field, stream, info) => {
      if (field !== 'file') return (stream.resume(), fail(fileError(`must be the one file part, named file (got a file part named ${JSON.stringify(field.slice(0, 64))})`)));
      const filename = info.filename ?? '';
      if (!FILE_NAME.test(filename)) {
        stream.resume();
        return fail(fileError('must have a file name without a path: letters, digits, . _ - (at most 255), not starting with a dot'));
      }
      name = filename;
      const tempPath = path.join(options.dir, `.upload-${randomUUID()}.partial`);
      const sink = new TempFile(tempPath, options);
      cleanup = async () => {
        stream.resume();
        // Closed before it is removed: Windows (the desktop app) cannot remove an open file.
        await sink.discard();
        await fs.promises.rm(tempPath, { force: true });
      };
      written = pipeline(stream, sink).then(async () => ({ size: sink.size, sha256: await sink.sha256(), tempPath }));
      // Failures are acted on at once (not when the form ends): stop reading, remove the temp file.
      written.catch(fail);
    });
    parser.on('filesLimit', () => fail(fileError('must be the only file part: send one file per upload')));
    parser.on('partsLimit', () => fail(badRequest('too many parts: send one part named file')));
    parser.on('error', () => fail(badRequest('malformed multipart/form-data body')));
    parser.on('close', () => void succeed());
    req.once('close', () => {
      if (!req.complete) fail(aborted());
    });
    req.pipe(parser);
  });
}
