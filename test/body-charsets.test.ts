import http from 'node:http';
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { afterAll, expect, it } from 'vitest';
import { sendBytes, startBuiltServer, type Answer } from './helpers/built-server.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';

/**
 * Request bodies are UTF-8 (RFC 8259 §8.1), forms UTF-8 or ISO-8859-1: every other charset, and a
 * Content-Type that does not parse, is answered 415 before any byte is decoded. Checked on the built
 * server (dist/server/main.js, in its own process), with every charset name iconv-lite (body-parser's
 * decoder) knows, on every route that reads a body: one request with `charset=utf-7` used to end the
 * process, because the bundle lacked a codec that decoding UTF-7 needs.
 */
const SETUP_TOKEN = 'charset-test-setup-token';
const TELEMETRY_TOKEN = 'charset-test-telemetry-token-of-32-chars';
const CONCURRENCY = 8;
/** Anonymous usage reports are limited to 60 a minute per address: each source address sends fewer. */
const USAGE_PER_ADDRESS = 50;

/**
 * Routes that get every name; the other write routes, which read their bodies the same way, get the
 * names body-parser itself would have decoded (its `utf-` ones), the unknown ones and the malformed headers.
 */
const EVERY_NAME = ['POST /api/auth/login', 'POST /api/usage/upload', 'POST /api/usage/upload/updatestatus', 'POST /api/telemetry', 'POST /api/instances', 'POST /api/import', 'POST /api/agent/heartbeat'];
const UNKNOWN = ['bogus', 'utf-9', 'utf-', 'x-unknown', 'utf-8-but-not-really', 'u'.repeat(300)];

/** Every name iconv-lite knows, as it stores them ('utf7' stands for UTF-7 too), and the `utf-` spellings body-parser let through. */
function iconvLabels(): string[] {
  const iconv = createRequire(import.meta.url)('iconv-lite') as { encodingExists(name: string): boolean; encodings: Record<string, unknown> };
  iconv.encodingExists('utf-8'); // loads its table of codecs
  const names = Object.keys(iconv.encodings);
  const dashed = names.filter((n) => /^utf\d/.test(n)).map((n) => `utf-${n.slice(3)}`);
  const spelled = ['UTF-7', 'utf-7-imap', 'UTF-16', 'UTF-16LE', 'utf-32be', 'latin1', 'ISO-8859-1', 'us-ascii', 'windows-1252', 'Shift_JIS', 'utf8'];
  return [...new Set([...names, ...dashed, ...spelled, ...UNKNOWN])];
}

/** Content-Type values that are not one media type with its parameters. */
const MALFORMED = [
  'application/json; charset=',
  'application/json; charset',
  'application/json; charset="utf-8',
  'application/json; charset=utf-8"',
  'application/json; charset = utf-8',
  'application/json; charset=utf-8 utf-7',
  'application/json; charset="utf-8" x',
  'application/json; charset=utf-8; charset=utf-7',
  'application/json; charset=utf-7; charset=utf-8',
  'application/json; charset=UTF-8; CHARSET=utf-7',
  'application/json, application/json; charset=utf-7',
  'application/json; charset=utf\\-8',
  'json; charset=utf-8',
  '/; charset=utf-8',
  '; charset=utf-8',
];

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const withCharset = (type: string, label: string) => `${type}; charset=${TOKEN.test(label) ? label : `"${label}"`}`;
const accepted = (type: string, label: string) => label.toLowerCase() === 'utf-8' || (type === 'application/x-www-form-urlencoded' && label.toLowerCase() === 'iso-8859-1');

const agents = new Map<string, http.Agent>();
/** A keep-alive agent per source address (127.0.0.x), so the per-address limits do not stop the requests first. */
function agent(localAddress = '127.0.0.1'): http.Agent {
  let found = agents.get(localAddress);
  if (!found) agents.set(localAddress, (found = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY, localAddress })));
  return found;
}
afterAll(() => {
  for (const a of agents.values()) a.destroy();
  removeTempDbs();
});

interface Probe {
  route: string;
  contentType: string;
  /** 415 when the route reads the body; any 4xx where the route refuses the caller first. */
  expect: 415 | '4xx';
  headers: Record<string, string>;
  body: Buffer;
  path: string;
  address?: string;
}

async function sendAll(url: string, probes: Probe[]): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < probes.length) {
      const p = probes[next++]!;
      const method = p.route.split(' ')[0]!;
      let answer: Answer;
      try {
        answer = await sendBytes(url + p.path, method!, { ...p.headers, 'content-type': p.contentType }, p.body, agent(p.address));
      } catch (err) {
        failures.push(`${p.route} [${p.contentType.slice(0, 80)}]: ${(err as Error).message}`);
        continue;
      }
      const ok = p.expect === 415 ? answer.status === 415 && /^\{"error":"[^"]+"\}$/.test(answer.body) : answer.status >= 400 && answer.status < 500;
      if (!ok) failures.push(`${p.route} [${p.contentType.slice(0, 80)}]: ${answer.status} ${answer.body}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return failures;
}

it('answers 415 to every charset but UTF-8 (and ISO-8859-1 for forms) on every route that reads a body, and keeps serving', { timeout: 120_000 }, async () => {
  const labels = iconvLabels();
  expect(labels.length).toBeGreaterThan(400);
  const server = await startBuiltServer({
    DB_PATH: tempDbPath(),
    FLEET_SETUP_TOKEN: SETUP_TOKEN,
    FLEET_AUTH_ALLOW_HTTP: 'true',
    FLEET_AGENT_ALLOW_HTTP: 'true',
    FLEET_TELEMETRY_TOKEN: TELEMETRY_TOKEN,
  });
  const { url } = server;
  let exited;
  try {
    const origin = { origin: url };
    const json = Buffer.from('{"a":"b"}');
    const contentTypes = (type: string, names = labels) => [...names.filter((l) => !accepted(type, l)).map((l) => withCharset(type, l)), ...MALFORMED.map((m) => m.replace('application/json', type))];
    const someNames = labels.filter((l) => /^utf-/i.test(l) || UNKNOWN.includes(l));

    // Setup reads a form or JSON while it is open (no account yet), and refuses them before anything else.
    const setupProbes: Probe[] = ['application/json', 'application/x-www-form-urlencoded'].flatMap((type) =>
      contentTypes(type).map((contentType) => ({ route: 'POST /setup', path: '/setup', contentType, expect: 415 as const, headers: origin, body: Buffer.from('setup_token=x&username=y') })),
    );
    expect(await sendAll(url, setupProbes)).toEqual([]);
    // A form in ISO-8859-1 is decoded: the refused form echoes the name.
    const latin1 = await fetch(`${url}/setup`, { method: 'POST', headers: { ...origin, 'content-type': 'application/x-www-form-urlencoded; charset=ISO-8859-1' }, body: new Uint8Array(Buffer.from('setup_token=x&display_name=Zo%EB', 'latin1')) });
    expect(latin1.status).toBe(403);
    expect(await latin1.text()).toContain('value="Zo\u00eb"');

    const setup = await sendBytes(`${url}/setup`, 'POST', { ...origin, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ setup_token: SETUP_TOKEN, username: 'admin', display_name: 'Admin', password: 'charset-test-password' })));
    expect(setup.status).toBe(201);
    const login = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: { ...origin, 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'charset-test-password' }) });
    expect(login.status).toBe(200);
    const session = { ...origin, cookie: login.headers.getSetCookie()[0]!.split(';')[0]! };
    // An enrolled host, so the agent's enroll and heartbeat routes get as far as the body too.
    const enrollment = await (await fetch(`${url}/api/hosts/enrollment-tokens`, { method: 'POST', headers: { ...session, 'content-type': 'application/json' }, body: JSON.stringify({ max_uses: 2 }) })).json();
    const enrolled = await fetch(`${url}/api/agent/enroll`, { method: 'POST', headers: { authorization: `Bearer ${enrollment.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ hostname: 'pve1', machine_id: 'charset-test-machine', agent_version: '1.0.0' }) });
    expect(enrolled.status).toBe(201);
    const hostToken = (await enrolled.json()).host_token as string;

    // Every write route, as the built server lists them in its API document.
    const doc = (await (await fetch(`${url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary: string }>> };
    const routes = Object.values(doc.paths).flatMap((ops) => Object.entries(ops).filter(([m]) => m !== 'get').map(([, op]) => op.summary));
    expect(routes).toEqual(expect.arrayContaining(EVERY_NAME));
    let usageSent = 0;
    const probes = routes
      .filter((route) => route !== 'POST /setup')
      .flatMap((route) => {
        const path = route.split(' ')[1]!.replace(/:\w+/g, '1');
        const headers: Record<string, string> = route.includes('/api/agent/')
          ? { authorization: `Bearer ${route.endsWith('/enroll') ? enrollment.token : hostToken}` }
          : route === 'POST /api/telemetry'
            ? { authorization: `Bearer ${TELEMETRY_TOKEN}` }
            : session;
        // A receipt is made by the server for a host it removed: a made-up one is refused before the body,
        // and counts as a failed attempt of its address, which must not be the other agent routes'.
        const receipt = route.startsWith('POST /api/agent/receipts/');
        return contentTypes('application/json', EVERY_NAME.includes(route) ? labels : someNames).map((contentType): Probe => {
          const address = route.startsWith('POST /api/usage/') ? `127.0.0.${10 + Math.floor(usageSent++ / USAGE_PER_ADDRESS)}` : receipt ? '127.0.0.2' : undefined;
          return { route, path, contentType, expect: receipt ? '4xx' : 415, headers, body: json, address };
        });
      });
    expect(await sendAll(url, probes)).toEqual([]);

    // What is accepted still works, through every way of reading a body: plain, chunked, compressed.
    const create = (headers: Record<string, string>, body: Buffer) => sendBytes(`${url}/api/instances`, 'POST', { ...session, ...headers }, body, agent());
    const instance = (vmid: number) => Buffer.from(JSON.stringify({ vmid, name: `web${vmid}`, state: 'deployed', stack: 'development' }));
    expect((await create({ 'content-type': 'application/json; charset=UTF-8' }, instance(1))).status).toBe(201);
    expect((await create({ 'content-type': 'application/json; charset="utf-8"', 'content-encoding': 'gzip' }, zlib.gzipSync(instance(2)))).status).toBe(201);
    expect((await create({ 'content-type': 'application/json', 'content-encoding': 'br' }, zlib.brotliCompressSync(instance(3)))).status).toBe(201);
    const chunked = await fetch(`${url}/api/instances`, { method: 'POST', headers: { ...session, 'content-type': 'application/json' }, body: new Blob([instance(4)]).stream(), duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(201);
    const telemetry = await fetch(`${url}/api/telemetry`, { method: 'POST', headers: { authorization: `Bearer ${TELEMETRY_TOKEN}`, 'content-type': 'application/json; charset=utf-8', 'content-encoding': 'gzip' }, body: new Uint8Array(zlib.gzipSync('[{"kind":"\u00e9"}]')) });
    expect(telemetry.status).toBe(202);

    expect(server.running()).toBe(true);
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
  } finally {
    exited = await server.stop();
  }
  expect(exited.exitCode, exited.all.slice(-2000)).toBe(0);
});
