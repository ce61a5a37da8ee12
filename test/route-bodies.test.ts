import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccountService } from '../server/access/accounts.js';
import { createAuditLog } from '../server/audit.js';
import { createDataContext } from '../server/context.js';
import { ROUTES } from '../server/contract/routes/index.js';
import { splitKey } from '../server/contract/route.js';
import { openDatabase, type Db } from '../server/db/database.js';
import { systemClock } from '../server/time.js';
import { startBuiltServer, type BuiltServer } from './helpers/built-server.js';
import { ADMIN_PASSWORD } from './helpers/server.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';

/**
 * Every route whose declaration in the route map has a body, table-driven from the map, against the
 * built server (dist/server/main.js in its own process): a body its schema refuses is a 400 with the
 * field errors, so the declared schema is the one that validates; and the API document shows it.
 */
const BODY_ROUTES = Object.entries(ROUTES)
  .filter(([, spec]) => 'body' in spec)
  .map(([key]) => key);

/** A list is what most bodies are not; a route whose body is a list refuses an object instead. */
const REFUSED: Record<string, unknown> = { 'PUT /api/policies': {} };

/** A path with its parameters filled: ids that exist or not do not matter, the body is checked first. */
const fill = (path: string) => path.replace(':rule', 'host.offline').replace(/:\w+/g, '1');

let server: BuiltServer;
let db: Db;
let cookie: string;
const agentTokens: { enrollment?: string; host?: string } = {};

async function send(key: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  const { method, path } = splitKey(key);
  const res = await fetch(server.url + fill(path), { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.text() };
}

/** The credential each route takes: an agent's token for /api/agent/*, none for usage ingestion, else the administrator's session. */
function credentialOf(key: string): Record<string, string> {
  if (key === 'POST /api/agent/enroll') return { authorization: `Bearer ${agentTokens.enrollment}` };
  if (key.includes(' /api/agent/')) return { authorization: `Bearer ${agentTokens.host}` };
  if (key.includes(' /api/usage/upload')) return {};
  return { cookie, origin: server.url };
}

beforeAll(async () => {
  const dbPath = tempDbPath();
  db = openDatabase(dbPath);
  const data = { ...createDataContext(db), clock: systemClock };
  const accounts = createAccountService(data, createAuditLog(data));
  const admin = await accounts.create({ username: 'admin', display_name: 'Administrator', role: 'administrator', password: ADMIN_PASSWORD });
  server = await startBuiltServer({ DB_PATH: dbPath, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_AGENT_ALLOW_HTTP: 'true' });
  cookie = `homefleet_session_dev=${accounts.sessions.issue(admin.id)}`;
  const minted = await send('POST /api/hosts/enrollment-tokens', credentialOf('POST /api/hosts/enrollment-tokens'), { name: 'bodies' });
  expect(minted.status).toBe(201);
  agentTokens.enrollment = (JSON.parse(minted.body) as { token: string }).token;
  const enrolled = await send('POST /api/agent/enroll', credentialOf('POST /api/agent/enroll'), { hostname: 'pve-bodies', machine_id: 'machine-bodies', agent_version: '1.0.0' });
  expect(enrolled.status, enrolled.body).toBe(201);
  agentTokens.host = (JSON.parse(enrolled.body) as { host_token: string }).host_token;
  // An enrollment token is used once: the enroll route's case gets a fresh one.
  agentTokens.enrollment = (JSON.parse((await send('POST /api/hosts/enrollment-tokens', credentialOf('POST /api/hosts/enrollment-tokens'), { name: 'bodies 2' })).body) as { token: string }).token;
});
afterAll(async () => {
  await server?.stop();
  db?.close();
  removeTempDbs();
});

describe('every declared body is validated by the built server', () => {
  it('covers the routes with a body', () => {
    expect(BODY_ROUTES.length).toBeGreaterThan(30);
    expect(BODY_ROUTES).toEqual(expect.arrayContaining(['POST /api/instances', 'PUT /api/instances/:vmid', 'PUT /api/jobs/:id', 'POST /api/agent/heartbeat', 'PUT /api/hosts/:id/maintenance']));
  });

  it.each(BODY_ROUTES)('%s answers 400 with field errors to a body its schema refuses', async (key) => {
    const res = await send(key, credentialOf(key), REFUSED[key] ?? []);
    expect(res.status, res.body).toBe(400);
    expect(JSON.parse(res.body), res.body).toEqual({ errors: expect.arrayContaining([expect.objectContaining({ field: expect.any(String), message: expect.any(String) })]) });
  });

  it('documents the schema of every declared body', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    for (const key of BODY_ROUTES) {
      const { method, path } = splitKey(key);
      const documented = path.replace(/:(\w+)/g, '{$1}');
      expect(doc.paths[documented]?.[method.toLowerCase()]?.requestBody, key).toBeDefined();
    }
  });
});
