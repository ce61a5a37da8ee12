import { useEffect, useRef, useState } from 'preact/hooks';
import { LIVE_EVENT_TYPES, type LiveEventData } from '../server/contract/catalogue';
import type { StreamNotices } from '../server/contract/events';

/**
 * The dashboard's one connection to GET /api/events, shared by every page. Pages subscribe to event
 * types; the layout shows whether the stream is live. When the browser gives up (the server was
 * down, a 429, a 401), a new EventSource is made after a growing pause, carrying the last id seen
 * so missed events are replayed.
 */
export type LiveState = 'off' | 'connecting' | 'live' | 'reconnecting';

/** What the stream sends: the contract's live events, and `reset` (missed events are gone: pages reload). */
export type StreamData = LiveEventData & Pick<StreamNotices, 'reset'>;
export type StreamEvent = keyof StreamData;
/** One event as a page hears it: checking `type` narrows `data` to that event's payload. */
export type LiveMessage<K extends StreamEvent = StreamEvent> = { [T in K]: { type: T; data: StreamData[T]; id: string } }[K];
export type LiveListener<K extends StreamEvent = StreamEvent> = (message: LiveMessage<K>) => void;

const STREAM_EVENTS: StreamEvent[] = [...LIVE_EVENT_TYPES, 'reset'];

const listeners = new Map<StreamEvent, Set<LiveListener>>();
const stateListeners = new Set<(state: LiveState) => void>();
let source: EventSource | null = null;
let state: LiveState = 'off';
let lastId = '';
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let failures = 0;
let onRevoked: (reason: string) => void = () => {};

const BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

function setState(next: LiveState): void {
  if (state === next) return;
  state = next;
  for (const listener of stateListeners) listener(next);
}

function dispatch(type: StreamEvent, event: MessageEvent): void {
  if (event.lastEventId) lastId = event.lastEventId;
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    return;
  }
  deliver(type, data, event.lastEventId);
}

/** Hands an event to the pages listening for its type: one from the stream, or one the page makes itself (id ''). */
function deliver(type: StreamEvent, data: unknown, id: string): void {
  const message = { type, data, id } as LiveMessage;
  for (const listener of listeners.get(type) ?? []) listener(message);
}

function connect(): void {
  const url = lastId ? `/api/events?last_event_id=${encodeURIComponent(lastId)}` : '/api/events';
  const es = new EventSource(url);
  source = es;
  es.onopen = () => {
    failures = 0;
    // Back after a break with no id to resume from (no event came before it): the server cannot
    // replay what this page missed meanwhile, so pages reload, as for the server's own reset.
    if (state === 'reconnecting' && !lastId) deliver('reset', { reason: 'the live stream was interrupted' } satisfies StreamData['reset'], '');
    setState('live');
  };
  es.onerror = () => {
    if (source !== es) return;
    setState('reconnecting');
    // CONNECTING: the browser retries by itself (with Last-Event-ID). CLOSED: it gave up; we retry.
    if (es.readyState === EventSource.CLOSED) {
      es.close();
      source = null;
      const wait = BACKOFF_MS[Math.min(failures++, BACKOFF_MS.length - 1)]!;
      retryTimer = setTimeout(connect, wait * (0.8 + Math.random() * 0.4));
      // The browser does not say why it gave up. A session that expired while the server was away
      // answers 401 here (no revoked event could reach us): then sign-in, not endless retries.
      fetch('/api/auth/session', { credentials: 'same-origin' }).then(
        (res) => {
          if (res.status === 401 && state !== 'off') {
            stopLive();
            onRevoked('your session has ended');
          }
        },
        () => {},
      );
    }
  };
  for (const type of STREAM_EVENTS) es.addEventListener(type, (event) => dispatch(type, event as MessageEvent));
  es.addEventListener('revoked', (event) => {
    let reason = 'your session ended';
    try {
      reason = String(JSON.parse((event as MessageEvent).data).reason || reason);
    } catch {
      // keep the default
    }
    stopLive();
    onRevoked(reason);
  });
}

/** Opens the stream (once; later calls only replace the revoked handler). */
export function startLive(options: { onRevoked: (reason: string) => void }): void {
  onRevoked = options.onRevoked;
  if (source || retryTimer) return;
  setState('connecting');
  connect();
}

export function stopLive(): void {
  clearTimeout(retryTimer);
  retryTimer = undefined;
  source?.close();
  source = null;
  failures = 0;
  setState('off');
}

/** Calls `fn` for each event of `type`; returns the unsubscribe function. For pages outside Preact hooks too. */
export function subscribe<K extends StreamEvent>(type: K, fn: LiveListener<K>): () => void {
  let set = listeners.get(type);
  if (!set) listeners.set(type, (set = new Set()));
  const listener = fn as LiveListener;
  set.add(listener);
  return () => set!.delete(listener);
}

/** Subscribes a component to event types for as long as it is mounted; `fn` may change between renders. */
export function useLive<K extends StreamEvent>(types: K | K[], fn: LiveListener<K>): void {
  const ref = useRef(fn);
  ref.current = fn;
  const key = Array.isArray(types) ? types.join(' ') : types;
  useEffect(() => {
    const offs = (key.split(' ') as K[]).map((type) => subscribe(type, (message) => ref.current(message)));
    return () => offs.forEach((off) => off());
  }, [key]);
}

export function useLiveState(): LiveState {
  const [current, setCurrent] = useState(state);
  useEffect(() => {
    stateListeners.add(setCurrent);
    setCurrent(state);
    return () => void stateListeners.delete(setCurrent);
  }, []);
  return current;
}

/** Marks keys (instance vmids, say) as just changed for a moment, so their rows can flash. */
export function useFlash(ms = 2_000): [Set<number | string>, (key: number | string) => void] {
  const [keys, setKeys] = useState<Set<number | string>>(new Set());
  const flash = (key: number | string) => {
    setKeys((current) => new Set(current).add(key));
    setTimeout(() => setKeys((current) => {
      const next = new Set(current);
      next.delete(key);
      return next;
    }), ms);
  };
  return [keys, flash];
}

/** Re-reads at most once per `ms`, however many events ask for it: a fleet of hosts heartbeats often. */
export function useCoalesced(reload: () => void, ms = 300): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return () => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      reload();
    }, ms);
  };
}
