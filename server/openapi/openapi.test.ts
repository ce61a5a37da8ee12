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

  it('includes a route registered after the server started', () => {
    const routes = [...server.routes, { method: 'GET' as const, path: '/api/later/:thing', access: 'fleet.read' as const }];
    const doc = buildOpenApiDocument(routes, VERSION) as Doc;
    expect(doc.paths['/api/later/{thing}']!.get).toMatchObject({ 'x-homefleet-access': 'fleet.read', parameters: [{ name: 'thing', in: 'path' }] });
  });
});
