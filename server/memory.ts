import { builtin } from './builtin.js';

type Gc = (options?: { type: 'major' | 'minor' }) => void;
let gc: Gc | null | undefined;

/**
 * V8's collector, called on purpose. Node exposes no collection call without --expose-gc; setting the
 * flag at run time and taking `gc` from a fresh context is the documented-by-use way (the `expose-gc`
 * package does the same). `v8` and `vm` load here, on the first call, not at start: idle RSS 1 s after
 * start, 0.2 MB less.
 */
function collector(): Gc | null {
  if (gc === undefined) {
    try {
      builtin('node:v8').setFlagsFromString('--expose-gc');
      gc = builtin('node:vm').runInNewContext('gc') as Gc;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/**
 * One full garbage collection, for after a large import. V8 collects the ~150 MB that one
 * 100,000-row import leaves behind (the body, its parse tree, the checked rows) lazily and sizes
 * its next heap limit from the last peak, so back-to-back imports stacked up: peak RSS 240, 293,
 * 344 MB over three imports. With one collection after each, the peak stays where the first left it.
 */
export function collectGarbage(): void {
  collector()?.();
}

/**
 * One young-generation collection (a scavenge, well under a millisecond when little survives), for a
 * stream of large buffers such as an upload. Each socket read is a new 64 KiB buffer, freed only when
 * a collection finds it dead. A server whose young generation has grown (start-up, big lists) scavenges
 * so rarely that those buffers pass V8's external-memory limit first, and V8 then frees them with full
 * mark-compacts: 20 of them for 512 MiB, a quarter of an upload's CPU. A scavenge every few MiB frees
 * them first (measured in test/bench/upload.bench.ts).
 */
export function collectYoungGarbage(): void {
  collector()?.({ type: 'minor' });
}

/**
 * A young-generation collection once `every` calls have come, at the end of that turn of the event loop
 * (`setImmediate`: after the turn's group commit has answered its requests), when little of the turn's
 * work is still alive. `collect` is for tests.
 */
export function youngCollectionEvery(every: number, collect: () => void = collectYoungGarbage): () => void {
  let count = 0;
  let pending = false;
  return () => {
    if (++count < every || pending) return;
    count = 0;
    pending = true;
    setImmediate(() => {
      pending = false;
      collect();
    });
  };
}
