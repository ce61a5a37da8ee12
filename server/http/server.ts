import http from 'node:http';
import type { Express } from 'express';
import { within } from '../tasks.js';

type Constructor = new (...args: never[]) => object;

/**
 * A constructor that builds `base`'s objects with `prototype` as their prototype. Node's request and
 * response are plain constructor functions, called here on the new object as a subclass would;
 * `Reflect.construct(base, args, new.target)` gives the same object, but V8 builds it on a slow path
 * and serving was 25% slower for it (measured). A `class`, which cannot be called, takes that path.
 */
function constructing(base: Constructor, prototype: object): Constructor {
  const callable = !/^class\b/.test(Function.prototype.toString.call(base));
  function Built(this: object, ...args: never[]) {
    if (!callable) return Reflect.construct(base, args, new.target);
    (base as unknown as (...a: never[]) => void).apply(this, args);
    return this;
  }
  Built.prototype = prototype;
  return Built as unknown as Constructor;
}

/**
 * Node's HTTP server options under which every request and response is born with the Express app's
 * prototypes. Express otherwise swaps them on each request (`Object.setPrototypeOf`), which leaves
 * the two objects on shapes V8 has not seen, so every later property access on them, Node's own
 * header and socket code included, takes the slow path. Served this way, bench:server's create
 * test went from 1,406 to 1,852 creates/s (homefleet alone, 7 rounds of 1,000). Express's swap
 * then finds the prototype already in place and changes nothing.
 */
export function expressServerOptions(app: Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  return {
    IncomingMessage: constructing(http.IncomingMessage, app.request) as typeof http.IncomingMessage,
    ServerResponse: constructing(http.ServerResponse, app.response) as unknown as typeof http.ServerResponse,
  };
}

/**
 * Stops accepting and lets the requests in flight finish, for at most `graceMs`; then the connections
 * still open are closed. No connection is kept alive on the way out: a request that comes on one
 * still open is answered with `Connection: close`, and one that falls idle once its answer is out is
 * closed within 50 ms. A browser would otherwise send its next request there: its live stream,
 * reconnecting, was answered 503 (the events hub closes first) until the grace ran out, and the
 * stop waited that long. Resolves false when the grace ran out.
 */
export async function closeServer(server: http.Server, graceMs: number): Promise<boolean> {
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => res.setHeader('Connection', 'close'));
  // close() also closes the connections idle now; the sweep, those that fall idle later.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  try {
    if (await within(closed, graceMs)) return true;
    server.closeAllConnections();
    await closed;
    return false;
  } finally {
    clearInterval(sweep);
  }
}
