import http from 'node:http';
import type { Express } from 'express';

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
