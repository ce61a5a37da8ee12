import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { SessionRevoked } from '../access/sessions.js';
import type { AppContext } from '../context.js';
import { roleHas, type Capability } from '../contract/access.js';
import { LIVE_EVENTS, LIVE_EVENT_TYPES, type LiveEventType } from '../contract/catalogue.js';
import { HttpError, serviceUnavailable } from '../errors.js';
import { credentialKey, recheckCredential, type CredentialSources, type StreamCredential } from './credential.js';

export interface LiveEventsOptions {
  /** How often a comment keeps proxies and browsers from timing the stream out (15 000 ms). */
  keepAliveMs?: number;
  /** How often each stream re-checks its session (15 000 ms, PRODUCT.md). */
  recheckMs?: number;
  /** Events kept for `Last-Event-ID` replay (1 000). */
  bufferSize?: number;
  /** Bytes of encoded events kept for replay (4 MiB): a thousand large events must not become a gigabyte. */
  bufferBytes?: number;
  /** Open streams per session or per API token (5): a tab that leaks EventSources gets 429, not the server's memory. */
  maxPerSession?: number;
  /** Open streams per account, its sessions and API tokens together (10): more tokens do not buy more streams. */
  maxPerAccount?: number;
  /** Open streams in all (1 000). */
  maxStreams?: number;
  /** Of `maxStreams`, this many only administrators may open (a twentieth: 50): others filling theirs cannot lock an administrator out. */
  adminReserve?: number;
  /**
   * A client this far behind (bytes queued in the server, past what the kernel holds) is dropped: the
   * connection is closed at once, which frees what was queued for it, and the browser reconnects and
   * replays (64 KiB). Each queued frame costs about as much again in bookkeeping: 1,000 streams that
   * never read, under 6,000 changes, left the server at 185 MB RSS against 111 MB with none open
   * (test/bench/streams-memory.bench.ts); 256 KiB took 226 MB after only 3,000 changes.
   */
  maxQueuedBytes?: number;
}

interface BufferedEvent {
  id: number;
  type: LiveEventType;
  /**
   * The encoded frame, one Buffer written to every stream: a stream that cannot send keeps a
   * reference to it, where a string would be copied into each stream's queue.
   */
  frame: Buffer;
  /** What roles without the detail capability get instead (the catalogue's `detail`). */
  summary?: { capability: Capability; frame: Buffer };
}

interface Stream {
  res: Response;
  credential: StreamCredential;
}

const tooManyStreams = () => new HttpError(429, { error: 'too many event streams' }, { 'Retry-After': '15' });

/**
 * The live event stream's hub: features publish on the bus, the hub numbers each event of the
 * contract's catalogue, keeps the last few for replay, and writes it to every open stream whose role
 * may see it (or its summary, where the catalogue says so).
 * Every `recheckMs` (and at once when sessions or tokens are revoked) each stream's credential is
 * checked again; one that no longer holds gets `event: revoked` with the reason, and the stream ends.
 */
export function createEventHub(ctx: AppContext, sources: CredentialSources, options: LiveEventsOptions = {}) {
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const recheckMs = options.recheckMs ?? 15_000;
  const bufferSize = options.bufferSize ?? 1_000;
  const bufferBytes = options.bufferBytes ?? 4 * 1024 * 1024;
  const maxPerSession = options.maxPerSession ?? 5;
  const maxPerAccount = options.maxPerAccount ?? 10;
  const maxStreams = options.maxStreams ?? 1_000;
  const adminReserve = Math.min(options.adminReserve ?? Math.floor(maxStreams / 20), maxStreams);
  const maxQueuedBytes = options.maxQueuedBytes ?? 64 * 1024;
  const { bus, clock, logger } = ctx;

  const streams = new Set<Stream>();
  /** Open streams per credential (credentialKey): a session's, or a personal API token's. */
  const perSession = new Map<string, number>();
  /** Open streams per account, whatever credential opened them. */
  const perAccount = new Map<number, number>();
  const buffer: BufferedEvent[] = [];
  /** What `buffer` holds, in bytes of its frames. */
  let buffered = 0;
  /** Events of this turn, written once its revocations have been checked (see publish). */
  let outbox: BufferedEvent[] = [];
  /**
   * Event ids are `<run>-<n>`: n counts this run's events from 1, and run is new at each start. A
   * browser that reconnects after a restart sends an id of the run before, whose n may well be one
   * this run has reached too: a bare number would replay this run's events after it as the ones it
   * missed, and the page would never learn what changed while the server was away. Another run's id
   * gets `reset`.
   */
  const run = randomBytes(4).toString('hex');
  let lastId = 0;
  let closed = false;

  function write(stream: Stream, chunk: string | Buffer): void {
    if (!streams.has(stream)) return;
    if (stream.res.writableLength > maxQueuedBytes) {
      logger.warn({ account: stream.credential.accountId }, 'event stream dropped: client too far behind');
      // Not end(): an ending response keeps its queue until the client reads it, which it may never do.
      end(stream, 'drop');
      return;
    }
    stream.res.write(chunk);
  }

  const count = <K>(map: Map<K, number>, key: K, by: 1 | -1) => {
    const n = (map.get(key) ?? 0) + by;
    if (n > 0) map.set(key, n);
    else map.delete(key);
  };

  function end(stream: Stream, how: 'end' | 'drop' = 'end'): void {
    if (!streams.delete(stream)) return;
    count(perSession, credentialKey(stream.credential), -1);
    count(perAccount, stream.credential.accountId, -1);
    if (how === 'drop') stream.res.destroy();
    else stream.res.end();
  }

  function revoke(stream: Stream, reason: string): void {
    if (!streams.has(stream)) return;
    stream.res.write(`event: revoked\ndata: ${JSON.stringify({ reason })}\n\n`);
    end(stream);
  }

  const sizeOf = (event: BufferedEvent) => event.frame.length + (event.summary?.frame.length ?? 0);

  const frameFor = (stream: Stream, event: BufferedEvent) =>
    event.summary && !roleHas(stream.credential.role, event.summary.capability) ? event.summary.frame : event.frame;

  function deliver(stream: Stream, event: BufferedEvent): void {
    if (roleHas(stream.credential.role, LIVE_EVENTS[event.type].capability)) write(stream, frameFor(stream, event));
  }

  function flush(): void {
    const due = outbox;
    outbox = [];
    for (const event of due) for (const stream of streams) deliver(stream, event);
  }

  /**
   * Numbers and buffers the event at once, and writes it a microtask later: the bus announces a
   * commit's events one after another, and a revocation among them (a role changed with its audit
   * entry) is checked as it arrives, so a stream that loses its access in that commit is gone before
   * any of the commit's events are written.
   */
  function publish(type: LiveEventType, data: unknown): void {
    if (closed) return;
    const id = ++lastId;
    const frame = (payload: unknown) => Buffer.from(`id: ${run}-${id}\nevent: ${type}\ndata: ${JSON.stringify(payload)}\n\n`);
    const detail = (LIVE_EVENTS[type] as { detail?: { capability: Capability; summarize: (data: unknown) => unknown } }).detail;
    const event: BufferedEvent = { id, type, frame: frame(data), ...(detail ? { summary: { capability: detail.capability, frame: frame(detail.summarize(data)) } } : {}) };
    buffer.push(event);
    buffered += sizeOf(event);
    // The oldest go first; a replay that would need them gets `reset` (missedSince).
    while (buffer.length > bufferSize || (buffer.length > 0 && buffered > bufferBytes)) buffered -= sizeOf(buffer.shift()!);
    if (outbox.length === 0) queueMicrotask(flush);
    outbox.push(event);
  }

  /** Returns false when the stream was revoked. */
  function check(stream: Stream, hint?: string): boolean {
    let result;
    try {
      result = recheckCredential(sources, clock, stream.credential, hint);
    } catch (err) {
      // The database closed under us (shutdown): end quietly, the close path handles the rest.
      logger.debug({ err: { message: (err as Error).message } }, 'event stream re-check failed');
      end(stream);
      return false;
    }
    if (result.ok) return true;
    revoke(stream, result.reason);
    return false;
  }

  function recheckAll(): void {
    for (const stream of [...streams]) check(stream);
  }

  // The bus announces a revocation once its transaction has committed: the re-check reads what it wrote.
  const recheckWhere = (affected: (s: Stream) => boolean, reason: string) => {
    for (const stream of [...streams]) if (affected(stream)) check(stream, reason);
  };
  const onRevoked = (change: SessionRevoked) =>
    recheckWhere((s) => (s.credential.kind === 'session' && s.credential.sessionId === change.sessionId) || s.credential.accountId === change.accountId, change.reason);

  const unsubscribe = [
    ...LIVE_EVENT_TYPES.map((type) => bus.on(type, (payload) => publish(type, payload))),
    bus.on('session.revoked', onRevoked),
    // A personal API token revoked (DELETE /api/tokens/:id): its streams end at once, as a session's do.
    bus.on('token.revoked', (change) => recheckWhere((s) => s.credential.kind === 'token' && s.credential.tokenId === change.tokenId, change.reason)),
    // An import replaces every instance at once: no list of events says that, so pages are told to reload.
    bus.on('backup.imported', () => {
      for (const stream of [...streams]) write(stream, resetFrame('a backup was imported'));
    }),
  ];

  // One task each for every open stream, not a timer per stream.
  const keepAlive = ctx.tasks.every('events.keep-alive', keepAliveMs, () => {
    for (const stream of [...streams]) write(stream, ': keep-alive\n\n');
  });
  const recheck = ctx.tasks.every('events.recheck', recheckMs, recheckAll);

  const resetFrame = (reason: string) => `id: ${run}-${lastId}\nevent: reset\ndata: ${JSON.stringify({ reason })}\n\n`;

  /** The events after `since`, or undefined when the buffer no longer reaches back that far. */
  function missedSince(since: number): BufferedEvent[] | undefined {
    if (since === lastId) return [];
    if (since > lastId) return undefined;
    const oldest = buffer[0]?.id ?? lastId + 1;
    if (since < oldest - 1) return undefined;
    return buffer.filter((event) => event.id > since);
  }

  return {
    /**
     * Opens a stream on `res`; throws 429 past the per-session (per-token) or per-account cap, 503
     * past the total (for anyone but an administrator, the total less the administrators' reserve) or after close.
     */
    open(res: Response, credential: StreamCredential, lastEventId: string | undefined): void {
      if (closed) throw serviceUnavailable('server shutting down');
      const key = credentialKey(credential);
      if ((perSession.get(key) ?? 0) >= maxPerSession) throw tooManyStreams();
      if ((perAccount.get(credential.accountId) ?? 0) >= maxPerAccount) throw tooManyStreams();
      const cap = credential.role === 'administrator' ? maxStreams : maxStreams - adminReserve;
      if (streams.size >= cap) throw new HttpError(503, { error: 'too many event streams' }, { 'Retry-After': '15' });
      const stream: Stream = { res, credential };
      streams.add(stream);
      count(perSession, key, 1);
      count(perAccount, credential.accountId, 1);
      res.on('close', () => end(stream));

      res.socket?.setNoDelay(true);
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-store, no-transform',
        'X-Accel-Buffering': 'no',
        Connection: 'keep-alive',
      });
      res.write(': connected\n\n');

      if (lastEventId !== undefined) {
        const [, of, n] = /^([0-9a-f]{8})-(\d{1,15})$/.exec(lastEventId.trim()) ?? [];
        const since = of === run ? Number(n) : -1;
        const missed = since < 0 ? undefined : missedSince(since);
        // More than a stream may have queued would drop it mid-replay, and the reconnect would replay again.
        const bytes = missed?.reduce((sum, event) => sum + frameFor(stream, event).length, 0) ?? 0;
        if (missed && bytes <= maxQueuedBytes) for (const event of missed) deliver(stream, event);
        else write(stream, resetFrame('missed events are no longer available; reload'));
      }
    },

    publish,
    get size() {
      return streams.size;
    },

    /** Ends every stream (server shutdown) and its tasks. */
    close(): void {
      if (closed) return;
      closed = true;
      keepAlive.cancel();
      recheck.cancel();
      for (const stop of unsubscribe) stop();
      for (const stream of [...streams]) end(stream);
    },
  };
}

export type EventHub = ReturnType<typeof createEventHub>;
