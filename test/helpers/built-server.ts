import { execa, type Result, type ResultPromise } from 'execa';
import http from 'node:http';
import path from 'node:path';
import { expect } from 'vitest';
import { ensureBuilt } from './build.js';
import { TestClient } from './http.js';
import { waitForListening } from './listening.js';

const root = path.resolve(import.meta.dirname, '../..');

type ChildOptions = { cwd: string; env: Record<string, string>; extendEnv: false; reject: false; all: true; forceKillAfterDelay: number };

export interface BuiltServer {
  url: string;
  child: ResultPromise<ChildOptions>;
  /** True while the process runs. */
  running(): boolean;
  /** SIGTERM (a clean stop), then its exit; what it printed is in `all`. */
  stop(): Promise<Result<ChildOptions>>;
}

/**
 * dist/server/main.js, as `npm start` and the container run it, in its own process on a free
 * loopback port, with only `env` (plus PORT, HOST and LOG_LEVEL=info) in its environment;
 * `packageRoot`: another folder holding a copy of dist/server (see shipped-agents.ts).
 * The caller stops it (in afterAll, or at the end of its test).
 */
export async function startBuiltServer(env: Record<string, string>, nodeArgs: string[] = [], packageRoot = root): Promise<BuiltServer> {
  await ensureBuilt();
  // SIGKILL only after the server's own shutdown grace (10 s for requests in flight, such as agents'
  // long polls) has passed: execa's default of 5 s killed a clean stop under load (exit code undefined).
  const options: ChildOptions = { cwd: packageRoot, env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, extendEnv: false, reject: false, all: true, forceKillAfterDelay: 15_000 };
  const child = execa(process.execPath, [...nodeArgs, 'dist/server/main.js'], options);
  const url = await waitForListening(child);
  return {
    url,
    child,
    running: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      child.kill('SIGTERM');
      return child;
    },
  };
}

/**
 * The environment of a built server that real agents reach over plain HTTP on loopback: its
 * database `fleet.db` in `dir`, waiting for setup with `setupToken`; `more` adds or overrides.
 */
export function agentServerEnv(dir: string, setupToken: string, more: Record<string, string> = {}): Record<string, string> {
  return { DB_PATH: path.join(dir, 'fleet.db'), FLEET_SETUP_TOKEN: setupToken, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true', ...more };
}

/**
 * A browser that sets up a fresh server with its setup token (the first administrator, `admin`,
 * with `password`) and signs in: the client holds the session.
 */
export async function firstAdministrator(url: string, setupToken: string, password: string): Promise<TestClient> {
  const admin = new TestClient(url);
  expect((await admin.post('/setup', { setup_token: setupToken, username: 'admin', display_name: 'Admin', password })).status).toBe(201);
  expect((await admin.post('/api/auth/login', { username: 'admin', password })).status).toBe(200);
  return admin;
}

export interface Answer {
  status: number;
  /** The first 300 characters of the body. */
  body: string;
}

/**
 * One request through node:http with the body as given (bytes, any headers, Content-Length set),
 * on `agent` (keep-alive, a local address) when given; a connection error rejects.
 */
export function sendBytes(url: string, method: string, headers: Record<string, string>, body?: Buffer, agent?: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8').slice(0, 300) }));
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    req.end(body);
  });
}
