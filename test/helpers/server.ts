import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Role } from '../../server/contract/access.js';
import { createApp, type AppOptions, type HomefleetApp } from '../../server/app.js';
import { hashPassword, type PasswordCost } from '../../server/access/passwords.js';
import { isoSeconds } from '../../server/time.js';
import { createListener } from '../../server/tls/listen.js';
import { TestClient } from './http.js';

export interface TestServer extends HomefleetApp {
  baseUrl: string;
  /** A browser signed in as an administrator (`admin`, password `ADMIN_PASSWORD`). */
  client: TestClient;
  /** A new account with this role and a browser signed in as it. */
  signIn(role: Role, username?: string): Promise<TestClient>;
  /** A browser with no session. */
  anonymous(): TestClient;
  /** Cuts every open connection, as a network that fails for a moment would; the server goes on listening. */
  dropConnections(): void;
  stop(): Promise<void>;
}

export const ADMIN_PASSWORD = 'admin-password-for-tests';
export const USER_PASSWORD = 'user-password-for-tests';

let accountSerial = 0;

/**
 * scrypt at the product's cost is 50 to 150 ms of CPU here, and the suite makes, changes and checks
 * passwords thousands of times: most of its in-process CPU. So the servers this helper starts hash new
 * passwords at this lower cost (injected through createApp, which the built server never is): still
 * scrypt, stored and verified by the product's code in its own format, the cost read from the hash.
 * A test of hashing itself (its queue, its time) passes `passwordCost: DEFAULT_PASSWORD_COST`.
 */
export const TEST_PASSWORD_COST: PasswordCost = { N: 1024, r: 8, p: 1 };

/**
 * The accounts signIn makes share one hash per password and cost, made once per process. Their logins
 * still run the real login route, with its real scrypt check.
 */
const hashes = new Map<string, Promise<string>>();
function hashOnce(password: string, cost: PasswordCost): Promise<string> {
  const key = `${cost.N}:${cost.r}:${cost.p}:${password}`;
  let hash = hashes.get(key);
  if (!hash) hashes.set(key, (hash = hashPassword(password, cost)));
  return hash;
}

/** A further account as the account service stores one, its password hash shared (hashOnce); no audit entry, as no one made it. */
async function addAccount(homefleet: HomefleetApp, username: string, role: Role, password: string, cost: PasswordCost): Promise<void> {
  homefleet.accounts.repo.insert({
    username, display_name: username, role, must_change_password: false,
    password_hash: await hashOnce(password, cost), created_at: isoSeconds(homefleet.context.clock.now()),
  });
}

/** Signs a browser in through the real login route; fails the test when that does not work. */
export async function logIn(client: TestClient, username: string, password: string): Promise<TestClient> {
  const res = await client.post('/api/auth/login', { username, password });
  if (res.status !== 200) throw new Error(`login of ${username} failed: ${res.status} ${res.text}`);
  return client;
}

/**
 * The real app on a real HTTP server on 127.0.0.1, with an in-memory database unless told otherwise.
 * Plain-HTTP loopback login is allowed unless the options say otherwise; `client` is signed in as an
 * administrator created through the account service (pass `signedIn: false` for an empty database).
 */
export async function startServer(options: AppOptions & { signedIn?: boolean } = {}): Promise<TestServer> {
  const { signedIn = true, passwordCost = TEST_PASSWORD_COST, ...appOptions } = options;
  const homefleet = createApp({ dbPath: ':memory:', ...appOptions, passwordCost, config: { authAllowHttp: true, ...appOptions.config } });
  // Served as the headless server serves it (server/tls/listen.ts), so every test runs the product's HTTP path.
  const server = createListener(homefleet.app, undefined).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const client = new TestClient(baseUrl);

  if (signedIn && !homefleet.accounts.repo.byUsername('admin')) {
    // Through the account service, as setup makes the first administrator (its audit entry included).
    await homefleet.accounts.create({ username: 'admin', display_name: 'Administrator', role: 'administrator', password: ADMIN_PASSWORD });
  }
  if (signedIn) await logIn(client, 'admin', ADMIN_PASSWORD);

  return {
    ...homefleet,
    baseUrl,
    client,
    async signIn(role: Role, username = `${role}-${++accountSerial}`) {
      await addAccount(homefleet, username, role, USER_PASSWORD, passwordCost);
      return logIn(new TestClient(baseUrl), username, USER_PASSWORD);
    },
    anonymous: () => new TestClient(baseUrl),
    dropConnections: () => server.closeAllConnections(),
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await homefleet.close();
    },
  };
}
