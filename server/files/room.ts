/** One upload's hold on the cache's room. */
export interface Reservation {
  /** Holds `size` bytes (the bytes received so far); a promise to wait on first, or throws when the room cannot be had. */
  grow(size: number): void | Promise<void>;
  /** The upload failed: its room is given back once its temp file is gone (`close`). */
  failing(): void;
  /** The upload ended (kept, refused or dropped): its room is given back. */
  close(): void;
}

/**
 * The room of the file cache, counted in one place: the cached files (`stored`), what uploads in flight
 * hold, and what is being removed from disk. Room is taken synchronously against all three, so parallel
 * uploads cannot together pass the cap (no check, then an await, then a write); room being given back
 * (a failed upload's temp file, a deleted or evicted file not yet unlinked) is waited for before more
 * is evicted or an upload refused, so the folder never holds more than the cap and no upload is refused
 * for room that is about to be free.
 */
export function createRoom(cap: number, stored: () => number, evict: (bytes: number) => void) {
  let held = 0;
  let removing = 0;
  const returning = new Set<Promise<void>>();

  /** A promise resolved by the function answered: room counted until then is waited for. */
  function giveBack(): () => void {
    let done!: () => void;
    const given = new Promise<void>((resolve) => (done = resolve));
    returning.add(given);
    void given.then(() => returning.delete(given));
    return done;
  }

  return {
    reserve(): Reservation {
      let mine = 0;
      let closed = false;
      let given: (() => void) | undefined;
      const grow = (size: number): void | Promise<void> => {
        // An upload that ended while it waited takes nothing.
        if (closed || size <= mine) return;
        const over = stored() + removing + held - mine + size - cap;
        if (over <= 0) {
          held += size - mine;
          mine = size;
          return;
        }
        if (returning.size) return Promise.all(returning).then(() => grow(size));
        // Evicted files are given back once unlinked (`removed`): waited for like the rest.
        evict(over);
        return grow(size);
      };
      return {
        grow,
        failing: () => void (given ??= giveBack()),
        close() {
          if (closed) return;
          closed = true;
          held -= mine;
          given?.();
        },
      };
    },

    /** `size` bytes of a file whose row is gone are on disk until the function answered is called. */
    removing(size: number): () => void {
      removing += size;
      const done = giveBack();
      return () => {
        removing -= size;
        done();
      };
    },

    /** Bytes held by uploads in flight and files not yet unlinked. */
    pending: () => held + removing,
  };
}

export type Room = ReturnType<typeof createRoom>;
