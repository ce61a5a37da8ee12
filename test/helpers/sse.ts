import http from 'node:http';
import net from 'node:net';
import type { TestClient } from './http.js';

export interface SseFrame {
  /** `comment` for `: …` lines, else the event name (`message` when none was given). */
  event: string;
  id?: string;
  data?: string;
  comment?: string;
  /** ms since the stream opened */
  at: number;
}

export interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Raw text received so far. */
  raw: string;
  frames: SseFrame[];
  /** Resolves with the first frame (already received or to come) that matches, or rejects after `timeoutMs`. */
  waitFor(match: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  isEnded(): boolean;
  close(): void;
  /** Parsed JSON data of the frames of this event type. */
  data<T = any>(event: string): T[];
}

/** Opens `GET path` as a real HTTP client with the browser's cookies and reads Server-Sent Events frames. */
export function openStream(client: TestClient, path = '/api/events', headers: Record<string, string> = {}): Promise<SseStream> {
  const url = new URL(path, client.baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', cookie: client.cookieHeader(), ...headers } }, (res) => {
      const frames: SseFrame[] = [];
      const waiters = new Set<{ match: (f: SseFrame) => boolean; resolve: (f: SseFrame) => void }>();
      let pending = '';
      let ended = false;
      let endResolve!: () => void;
      const endedPromise = new Promise<void>((r) => (endResolve = r));
      const stream: SseStream = {
        status: res.statusCode!,
        headers: res.headers,
        raw: '',
        frames,
        waitFor(match, timeoutMs = 5_000) {
          const found = frames.find(match);
          if (found) return Promise.resolve(found);
          return new Promise((ok, fail) => {
            const waiter = {
              match,
              resolve: (f: SseFrame) => {
                clearTimeout(timer);
                waiters.delete(waiter);
                ok(f);
              },
            };
            const timer = setTimeout(() => {
              waiters.delete(waiter);
              fail(new Error(`no matching frame within ${timeoutMs} ms; got:\n${stream.raw}`));
            }, timeoutMs);
            waiters.add(waiter);
          });
        },
        ended: endedPromise,
        isEnded: () => ended,
        close: () => req.destroy(),
        data: (event) => frames.filter((f) => f.event === event).map((f) => JSON.parse(f.data ?? 'null')),
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        stream.raw += chunk;
        pending += chunk;
        let cut: number;
        while ((cut = pending.indexOf('\n\n')) >= 0) {
          const block = pending.slice(0, cut);
          pending = pending.slice(cut + 2);
          const frame: SseFrame = { event: 'message', at: Date.now() - started };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              frame.event = 'comment';
              frame.comment = line.slice(1).trim();
            } else {
              const colon = line.indexOf(':');
              const field = line.slice(0, colon);
              const value = line.slice(colon + 1).replace(/^ /, '');
              if (field === 'event') frame.event = value;
              else if (field === 'id') frame.id = value;
              else if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
            }
          }
          frames.push(frame);
          for (const waiter of [...waiters]) if (waiter.match(frame)) waiter.resolve(frame);
        }
      });
      const finish = () => {
        if (ended) return;
        ended = true;
        endResolve();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      resolve(stream);
    });
    req.on('error', reject);
  });
}

/**
 * `GET /api/events` on a raw socket that reads the answer's first bytes (for its status) and then
 * nothing more: what the server writes piles up, as for a client that stalls. Destroy the socket to end it.
 */
export function openUnread(port: number, headers: Record<string, string>): Promise<{ status: number; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n${lines}\r\n`));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'))?.[1]), socket });
    });
    socket.once('error', reject);
  });
}
