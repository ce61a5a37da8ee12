import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions, type HomefleetApp } from '../../server/app.js';
import { TestClient } from './http.js';

export interface TestServer extends HomefleetApp {
  baseUrl: string;
  /** A client for the registry tests. */
  client: TestClient;
  stop(): Promise<void>;
}

/** The real app on a real HTTP server on 127.0.0.1, with an in-memory database unless told otherwise. */
export async function startServer(options: AppOptions = {}): Promise<TestServer> {
  const homefleet = createApp({ dbPath: ':memory:', ...options });
  const server = homefleet.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    ...homefleet,
    baseUrl,
    client: new TestClient(baseUrl),
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await homefleet.close();
    },
  };
}
