import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

export interface MockRemote {
  /** `http://127.0.0.1:port` */
  url: string;
  requests: RecordedRequest[];
  /** Replaces how the mock answers. */
  handle(handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

/** A stand-in for a remote service (Tailscale, PatchMon, Semaphore): a real HTTP server on 127.0.0.1. */
export async function startMockRemote(handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end()): Promise<MockRemote> {
  const requests: RecordedRequest[] = [];
  let current = handler;
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    current(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => void (current = next),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Answers JSON with a status. */
export const json = (status: number, body: unknown) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};
