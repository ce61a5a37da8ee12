import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests have arrived (at most `ms`, else rejects with what came). */
  waitFor(count: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/**
 * A notification receiver on 127.0.0.1 (a webhook, ntfy, Gotify or Discord stand-in): records every
 * request with its body and answers with `status(n)` for the n-th it ever got (from 1), 200 by default.
 */
export async function startReceiver(status: (n: number) => number = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.statusCode = status(++count);
      res.end('{}');
      for (const w of waiters.splice(0)) w();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    async waitFor(count, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${received.length} of ${count} requests arrived within ${ms} ms: ${JSON.stringify(received.map((r) => r.body))}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => (clearTimeout(t), resolve()));
        });
      }
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
