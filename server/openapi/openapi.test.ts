import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { VERSION } from '../version.js';
import { buildOpenApiDocument, openApiPath } from './document.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ config: { telemetryToken: 't'.repeat(40) } });
});
afterAll(() => server.stop());

type Doc = { openapi: string; info: { version: string }; paths: Record<string, Record<string, any>>; components: any };

describe('GET /api/openapi.json', () => {
  it('is public, and a valid OpenAPI 3.1 document by a real validator', async () => {
    const res = await server.anonymous().get('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = res.body as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(VERSION);
    const result = await new Validator().validate(structuredClone(doc) as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every registered route with its method, access and path parameters', async () => {
    const doc = (await server.anonymous().get('/api/openapi.json')).body as Doc;
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op['x-homefleet-access']]));
    const registered = server.routes.map((r) => [`${r.method} ${openApiPath(r.path).path}`, r.access]);
    expect(listed.sort()).toEqual(registered.sort());
    expect(registered.length).toBeGreaterThan(30);
    const patchUser = doc.paths['/api/users/{id}']!.patch;
    expect(patchUser.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(patchUser.security).toEqual([{ session: [] }]);
  });

  it('has both security schemes, error bodies, and request bodies from the zod schemas', async () => {
    const doc = (await server.anonymous().get('/api/openapi.json')).body as Doc;
    expect(doc.components.securitySchemes).toMatchObject({
      session: { type: 'apiKey', in: 'cookie', name: '__Host-homefleet_session' },
      bearer: { type: 'http', scheme: 'bearer' },
    });
    expect(doc.components.schemas.Error).toEqual({ type: 'object', properties: { error: { type: 'string' } }, required: ['error'] });
    const createToken = doc.paths['/api/tokens']!.post;
    expect(createToken.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100 },
        role: { enum: ['viewer', 'operator', 'administrator'] },
        expires_at: { anyOf: expect.arrayContaining([expect.objectContaining({ type: 'string', format: 'date-time' })]) },
      },
      required: ['name', 'role'],
    });
    expect(createToken.responses['201'].content['application/json'].schema).toMatchObject({
      type: 'object',
      properties: { token: { type: 'string' }, expires_at: { type: ['string', 'null'] } },
    });
    expect(doc.paths['/api/health']!.get.responses['200'].content['application/json'].schema).toEqual({
      type: 'object',
      properties: { status: { type: 'string', const: 'ok' }, version: { type: 'string' } },
      required: ['status', 'version'],
      additionalProperties: false,
    });
    expect(doc.paths['/api/tokens/{id}']!.delete.responses['204']).toEqual({ description: 'Revoked' });
    // Bodies the registry and jobs validate themselves are documented too.
    expect(doc.paths['/api/instances']!.post.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      properties: { vmid: { type: 'integer', exclusiveMinimum: 0 }, state: { enum: ['deployed', 'testing', 'degraded'] } },
      required: ['vmid', 'name', 'state', 'stack'],
    });
    expect(doc.paths['/api/instances/{vmid}']!.put.requestBody.content['application/json'].schema.required).toBeUndefined();
    expect(doc.paths['/api/jobs/{id}']!.put.requestBody.content['application/json'].schema.properties.schedule).toMatchObject({ type: 'integer', minimum: 1, maximum: 10080 });
    // Tokens may read the registry, not manage accounts.
    expect(doc.paths['/api/instances']!.get.security).toEqual([{ session: [] }, { bearer: [] }]);
    expect(doc.paths['/api/instances']!.get.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
    expect(doc.paths['/api/health']!.get.security).toEqual([]);
    expect(doc.paths['/api/audit']!.get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['query:limit', 'query:before']);
  });

  it('documents the live event stream, hosts, agent and usage routes the way they answer', async () => {
    const doc = (await server.anonymous().get('/api/openapi.json')).body as Doc;
    const params = (op: any) => (op.parameters ?? []).map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    const events = doc.paths['/api/events']!.get;
    expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
    expect(params(events)).toEqual(['query:last_event_id']);
    expect(events.security).toEqual([{ session: [] }, { bearer: [] }]);
    expect(events.responses['429']).toBeDefined();
    expect(params(doc.paths['/api/usage/stats']!.get)).toEqual(['query:days']);
    expect(params(doc.paths['/api/usage']!.get)).toEqual(['query:limit', 'query:before']);
    expect(params(doc.paths['/api/hosts/{id}']!.delete)).toEqual(['path:id', 'query:force']);
    expect(Object.keys(doc.paths['/api/hosts/{id}']!.delete.responses)).toEqual(expect.arrayContaining(['200', '202']));
    expect(doc.paths['/api/hosts/enrollment-tokens']!.post.responses['201']).toBeDefined();
    expect(doc.paths['/api/hosts/{id}/revoke-token']!.post.responses['204']).toBeDefined();
    // Agents authenticate with their own bearer tokens (hfe_, hfh_, hfr_), not a person's.
    expect(doc.components.securitySchemes.agent).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [path, status] of [['/api/agent/enroll', '201'], ['/api/agent/heartbeat', '200'], ['/api/agent/receipts/{operation_id}', '204']] as const) {
      const op = doc.paths[path]!.post;
      expect(op.security, path).toEqual([{ agent: [] }]);
      expect(Object.keys(op.responses), path).toEqual(expect.arrayContaining([status, '401', '403', '429']));
    }
    expect(params(doc.paths['/api/agent/receipts/{operation_id}']!.post)).toEqual(['path:operation_id']);
    expect(doc.paths['/api/agent/receipts/{operation_id}']!.post.requestBody).toBeUndefined();
    expect(doc.paths['/api/agent/heartbeat']!.post.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['agent_version', 'guests']));
    // The release files say what they are.
    expect(Object.keys(doc.paths['/api/agent/releases/manifest.json']!.get.responses['200'].content)).toEqual(['application/json']);
    expect(Object.keys(doc.paths['/api/agent/releases/manifest.json.sig']!.get.responses['200'].content)).toEqual(['text/plain']);
    const agentFile = doc.paths['/api/agent/releases/{version}/host-agent.sh']!.get;
    expect(params(agentFile)).toEqual(['path:version']);
    expect(Object.keys(agentFile.responses['200'].content)).toEqual(['text/x-shellscript']);
    expect(Object.keys(doc.paths['/install/agent.sh']!.get.responses['200'].content)).toEqual(['text/x-shellscript']);
  });

  it('includes a route registered after the server started', () => {
    const routes = [...server.routes, { method: 'GET' as const, path: '/api/later/:thing', access: 'fleet.read' as const, credentials: ['session', 'token'] as const, ids: [], answers: [] }];
    const doc = buildOpenApiDocument(routes, VERSION) as Doc;
    expect(doc.paths['/api/later/{thing}']!.get).toMatchObject({ 'x-homefleet-access': 'fleet.read', parameters: [{ name: 'thing', in: 'path' }] });
  });
});
