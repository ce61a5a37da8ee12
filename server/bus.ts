import type { LiveEventMap } from './contract/catalogue.js';
import type { Transactions } from './db/tx.js';

/**
 * Events that stay inside the server (a session ended, a backup was imported). A feature declares
 * its own by augmenting this interface in its folder:
 * `declare module '../bus.js' { interface InternalEvents { 'backup.imported': {} } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface InternalEvents {}

/** Every event on the bus: the live events of the contract's catalogue, and the internal ones. */
export type BusEvents = LiveEventMap & InternalEvents;
export type BusEvent = keyof BusEvents;
type Listener<K extends BusEvent> = (payload: BusEvents[K]) => void;

export interface Bus {
  /** Announces `payload` once the current transaction commits (at once outside one); never a change that rolled back. */
  publish<K extends BusEvent>(type: K, payload: BusEvents[K]): void;
  /** Calls `fn` for each `type` event; returns the function that stops it. */
  on<K extends BusEvent>(type: K, fn: Listener<K>): () => void;
}

/**
 * What happened inside the app, for the features that act on it (the live stream, jobs run on
 * create). Listeners run one after another once the change has committed; one that throws is
 * reported to `onError` and does not keep the others from hearing of it.
 */
export function createBus(transactions: Pick<Transactions, 'afterCommit'>, onError: (err: unknown, type: string) => void): Bus {
  const listeners = new Map<BusEvent, Set<Listener<never>>>();

  function deliver<K extends BusEvent>(type: K, payload: BusEvents[K]): void {
    for (const fn of listeners.get(type) ?? []) {
      try {
        (fn as Listener<K>)(payload);
      } catch (err) {
        onError(err, type);
      }
    }
  }

  return {
    publish(type, payload) {
      if (!listeners.get(type)?.size) return;
      transactions.afterCommit(() => deliver(type, payload));
    },
    on(type, fn) {
      let set = listeners.get(type);
      if (!set) listeners.set(type, (set = new Set()));
      set.add(fn as Listener<never>);
      return () => void set.delete(fn as Listener<never>);
    },
  };
}
