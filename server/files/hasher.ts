import type { Worker } from 'node:worker_threads';
import { builtin } from '../builtin.js';

/**
 * SHA-256 of uploads, computed on a worker thread: hashing is most of an upload's CPU (two thirds of
 * the main thread's time in test/bench/upload.bench.ts), and on the main thread it ran in turn with
 * reading the request and writing the file; beside them, the three go on at once. One worker, made at
 * the first upload and kept (unref'd), holds a hash per upload in flight.
 *
 * The bytes are copied once into slabs that go to the worker and come back (transferred both ways,
 * never copied again, never garbage: a fresh buffer for each batch piled up in the worker until its
 * collector came, 100 MB for a 256 MiB upload). A stream waits while more than IN_FLIGHT bytes of
 * slabs are queued for the worker, so a slow hash slows the upload (backpressure) instead of filling memory.
 */
const IN_FLIGHT = 4 * 1024 * 1024;
const SLAB = 256 * 1024;
/** Slabs kept for reuse: what IN_FLIGHT holds, and a few more. */
const KEPT_SLABS = IN_FLIGHT / SLAB + 8;

// The worker's whole program: a string (eval) so that the server, the desktop app's bundle and the
// container need no file of its own beside them.
const PROGRAM = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', ({ id, kind, bytes, length }) => {
  if (kind === 'update') {
    let hash = hashes.get(id);
    if (!hash) hashes.set(id, (hash = createHash('sha256')));
    hash.update(new Uint8Array(bytes, 0, length));
    parentPort.postMessage({ id, kind, size: length, bytes }, [bytes]);
  } else if (kind === 'digest') {
    const hash = hashes.get(id) ?? createHash('sha256');
    hashes.delete(id);
    parentPort.postMessage({ id, kind, hex: hash.digest('hex') });
  } else hashes.delete(id);
});
`;

interface Stream {
  queued: number;
  /** Resolved when the queue has room again. */
  room?: () => void;
  digest?: { resolve: (hex: string) => void; reject: (err: Error) => void };
  failed?: Error;
}

export interface UploadHash {
  /** Queues the batch for hashing; resolves once the queue has room for more. */
  update(buffers: readonly Buffer[]): Promise<void>;
  /** The hex SHA-256 of every batch, once all are hashed. */
  digest(): Promise<string>;
  /** Forgets the hash (an upload that failed). */
  drop(): void;
}

export function createHasher() {
  let worker: Worker | undefined;
  let serial = 0;
  const streams = new Map<number, Stream>();
  const slabs: ArrayBuffer[] = [];
  const slab = () => slabs.pop() ?? new ArrayBuffer(SLAB);

  const fail = (err: Error) => {
    for (const stream of streams.values()) {
      stream.failed = err;
      stream.room?.();
      stream.digest?.reject(err);
    }
    streams.clear();
    worker = undefined;
  };

  function started(): Worker {
    if (worker) return worker;
    // It allocates next to nothing (the slabs come back): a small young generation keeps its memory small.
    const made = new (builtin('node:worker_threads').Worker)(PROGRAM, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 2 } });
    made.unref();
    made.on('message', (m: { id: number; kind: string; size?: number; hex?: string; bytes?: ArrayBuffer }) => {
      if (m.bytes && slabs.length < KEPT_SLABS) slabs.push(m.bytes);
      const stream = streams.get(m.id);
      if (!stream) return;
      if (m.kind === 'update') {
        stream.queued -= m.bytes!.byteLength;
        if (stream.queued <= IN_FLIGHT && stream.room) {
          const room = stream.room;
          stream.room = undefined;
          room();
        }
      } else if (m.kind === 'digest') {
        streams.delete(m.id);
        stream.digest?.resolve(m.hex!);
      }
    });
    made.on('error', (err) => fail(new Error(`the upload hasher failed: ${err.message}`)));
    made.on('exit', (code) => worker === made && fail(new Error(`the upload hasher stopped (exit ${code})`)));
    worker = made;
    return made;
  }

  return {
    open(): UploadHash {
      const id = ++serial;
      const stream: Stream = { queued: 0 };
      streams.set(id, stream);
      return {
        update(buffers) {
          if (stream.failed) return Promise.reject(stream.failed);
          const target = started();
          let current = slab();
          let filled = 0;
          const send = () => {
            // Counted by the memory held (a whole slab), not by the bytes in it.
            stream.queued += current.byteLength;
            target.postMessage({ id, kind: 'update', bytes: current, length: filled }, [current]);
            current = slab();
            filled = 0;
          };
          for (const b of buffers) {
            for (let at = 0; at < b.length; ) {
              const n = b.copy(new Uint8Array(current), filled, at, Math.min(b.length, at + SLAB - filled));
              at += n;
              filled += n;
              if (filled === SLAB) send();
            }
          }
          if (filled > 0) send();
          slabs.push(current);
          if (stream.queued <= IN_FLIGHT) return Promise.resolve();
          return new Promise<void>((resolve) => (stream.room = resolve)).then(() => {
            if (stream.failed) throw stream.failed;
          });
        },
        digest() {
          if (stream.failed) return Promise.reject(stream.failed);
          return new Promise<string>((resolve, reject) => {
            stream.digest = { resolve, reject };
            started().postMessage({ id, kind: 'digest' });
          });
        },
        drop() {
          if (!streams.delete(id) || !worker) return;
          worker.postMessage({ id, kind: 'drop' });
        },
      };
    },
  };
}

export type Hasher = ReturnType<typeof createHasher>;
