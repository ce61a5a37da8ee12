import { execa, type ResultPromise } from 'execa';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { killWhenTestEnds } from './listening.js';
import { rawRequest } from './raw.js';

const root = path.resolve(import.meta.dirname, '../..');

export interface Headless {
  child: ResultPromise;
  /** The first address the listening line names (http://127.0.0.1:PORT, or https://…). */
  url: string;
  /** The address on 127.0.0.1 with the server's port, in the scheme it speaks. */
  local: string;
  /** The server's JSON log lines so far. */
  log(): Array<Record<string, any>>;
  /** The first log line that matches, once it has been written (10 s at most). */
  logLine(match: (line: Record<string, any>) => boolean): Promise<Record<string, any>>;
  /** SIGTERM, and the exit. */
  stop(): Promise<Awaited<ResultPromise>>;
}

/**
 * The built server (dist/server/main.js, as `npm start` runs it) in its own process on a free port,
 * with only the given environment (LOG_LEVEL=info, PORT=0, HOST=127.0.0.1 unless given); resolves
 * once it has said where it listens. Killed when the test ends; `shared` (started in beforeAll for a
 * whole file): the caller stops it. `clockShiftMs`: the server's clock runs that far ahead of the
 * machine's (helpers/shifted-clock.mjs; nextWindowClock in helpers/clock.ts).
 */
export async function startHeadless(env: Record<string, string>, options: { umask?: string; shared?: boolean; clockShiftMs?: number } = {}): Promise<Headless> {
  const full: Record<string, string> = { PATH: process.env.PATH!, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env };
  const node = ['dist/server/main.js'];
  if (options.clockShiftMs) {
    full.HOMEFLEET_TEST_CLOCK_SHIFT_MS = String(options.clockShiftMs);
    node.unshift('--import', pathToFileURL(path.join(import.meta.dirname, 'shifted-clock.mjs')).href);
  }
  const child = options.umask
    ? execa('sh', ['-c', `umask ${options.umask} && exec "$0" "$@"`, process.execPath, ...node], { cwd: root, env: full, extendEnv: false, reject: false })
    : execa(process.execPath, node, { cwd: root, env: full, extendEnv: false, reject: false });
  if (!options.shared) killWhenTestEnds(child);
  let out = '';
  const lines = () => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no listening line within 10 s: ${out}`))), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (out.length < 1_000_000) out += chunk;
      const match = /listening on (https?:\/\/[^"\s,]+)/.exec(out);
      if (match) (clearTimeout(timer), resolve(match[1]!));
    });
    void child.then((r) => (clearTimeout(timer), reject(new Error(`server exited: ${r.stderr}`))));
  });
  const { protocol, port } = new URL(url);
  return {
    child,
    url,
    local: `${protocol}//127.0.0.1:${port}`,
    log: lines,
    async logLine(match) {
      for (let waited = 0; waited < 10_000; waited += 20) {
        const line = lines().find(match);
        if (line) return line;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`no such log line within 10 s: ${out}`);
    },
    async stop() {
      child.kill('SIGTERM');
      return child;
    },
  };
}

/**
 * The first administrator (through POST /setup with FLEET_SETUP_TOKEN `setupToken`) and a signed-in
 * session as it; returns the cookie pair. `ca` for a server with its own certificate.
 */
export async function setUpAdmin(base: string, setupToken: string, ca?: string): Promise<string> {
  const origin = { origin: base };
  const account = { username: 'root', display_name: 'Root', password: 'headless-password' };
  const setup = await rawRequest(base, 'POST', '/setup', origin, { setup_token: setupToken, ...account }, { ca });
  if (setup.status !== 201) throw new Error(`setup: ${setup.status} ${JSON.stringify(setup.body)}`);
  return signIn(base, ca);
}

/** A new session of the administrator setUpAdmin made; returns the cookie pair. */
export async function signIn(base: string, ca?: string): Promise<string> {
  const login = await rawRequest(base, 'POST', '/api/auth/login', { origin: base }, { username: 'root', password: 'headless-password' }, { ca });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  return login.headers['set-cookie']![0]!.split(';')[0]!;
}
