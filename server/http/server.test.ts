import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { createListener } from '../tls/listen.js';
import { expressServerOptions } from './server.js';

const homefleet = createApp();
afterAll(() => homefleet.close());

/** Serves the app, records each request's and response's prototype before Express sees them, and GETs /api/health. */
async function prototypesSeen(server: http.Server) {
  const seen: { request: object | null; response: object | null }[] = [];
  server.prependListener('request', (req, res) => seen.push({ request: Object.getPrototypeOf(req), response: Object.getPrototypeOf(res) }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/health`);
    return { status: res.status, body: await res.json(), seen };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('the HTTP server', () => {
  it('builds requests and responses on the Express prototypes, so Express has nothing to swap', async () => {
    const result = await prototypesSeen(createListener(homefleet.app, undefined));
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ status: 'ok' });
    expect(result.seen).toEqual([{ request: homefleet.app.request, response: homefleet.app.response }]);
  });

  it('makes objects that are still Node requests and responses', () => {
    const { IncomingMessage, ServerResponse } = expressServerOptions(homefleet.app);
    const request = new IncomingMessage!(new net.Socket());
    const response = new ServerResponse!(request);
    expect(request).toBeInstanceOf(http.IncomingMessage);
    expect(response).toBeInstanceOf(http.ServerResponse);
    expect(Object.getPrototypeOf(request)).toBe(homefleet.app.request);
    expect(request.headers).toEqual({});
    expect(response.statusCode).toBe(200);
  });

  it('without them, a plain server hands Express objects of another prototype (what the options avoid)', async () => {
    const result = await prototypesSeen(http.createServer(homefleet.app));
    expect(result.status).toBe(200);
    expect(result.seen).toEqual([{ request: http.IncomingMessage.prototype, response: http.ServerResponse.prototype }]);
  });
});
