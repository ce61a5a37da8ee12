import * as z from 'zod';
import { AGENT_CREDENTIALS, type RouteRecord } from '../http/routes.js';

type Json = Record<string, unknown>;

/** zod 4's JSON Schema export of what a client sends (`input`: before transforms and defaults) or gets (`output`). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  return rest;
}

/** `/api/users/:id` → `/api/users/{id}`; Express 5's `/{*page}` → `/{page}`. */
export function openApiPath(expressPath: string): { path: string; params: string[] } {
  const params: string[] = [];
  const path = expressPath
    .replace(/\{\*(\w+)\}/g, (_m, name: string) => (params.push(name), `{${name}}`))
    .replace(/:(\w+)/g, (_m, name: string) => (params.push(name), `{${name}}`));
  return { path, params };
}

const errorRef = { $ref: '#/components/schemas/Error' };
const json = (schema: Json) => ({ 'application/json': { schema } });

const components = {
  securitySchemes: {
    session: {
      type: 'apiKey',
      in: 'cookie',
      name: '__Host-homefleet_session',
      description:
        'The browser session from POST /api/auth/login (`homefleet_session_dev` over plain HTTP on loopback). Every state-changing request with it must carry an `Origin` header equal to the server\'s origin.',
    },
    agent: {
      type: 'http',
      scheme: 'bearer',
      description:
        'An agent\'s own token, only on /api/agent/*: `hfe_…` (enrollment) on /api/agent/enroll, `hfh_…` (host) on /api/agent/heartbeat, `hfr_…` (receipt) on /api/agent/receipts/{operation_id}. Any refused token answers 401 `invalid token`; plain HTTP answers 403 `https required` unless the server allows it.',
    },
    bearer: {
      type: 'http',
      scheme: 'bearer',
      description:
        'A personal API token (`hfp_…`, made on the dashboard\'s API tokens page or with POST /api/tokens). Acts as its owner with the lower of the token\'s and the owner\'s role; needs no Origin; cannot use /api/auth/*, /api/tokens, /api/users*, /api/audit or /api/agent/*.',
    },
  },
  schemas: {
    Error: { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] },
    ValidationErrors: {
      type: 'object',
      properties: {
        errors: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, required: ['field', 'message'] },
        },
      },
      required: ['errors'],
    },
  },
  responses: {
    BadRequest: { description: 'Invalid input: the fields and what is wrong with them, or an error text', content: json({ oneOf: [{ $ref: '#/components/schemas/ValidationErrors' }, errorRef] }) },
    Unauthorized: { description: '`authentication required`, `invalid token`, or a route that needs a browser session', content: json(errorRef) },
    Forbidden: { description: '`forbidden` (role), `origin mismatch`, `password change required`, `https required`', content: json(errorRef) },
    NotFound: { description: 'Not found', content: json(errorRef) },
    TooManyRequests: {
      description: 'Throttled; wait the seconds of `Retry-After`',
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
      content: json(errorRef),
    },
  },
};

function operation(route: RouteRecord, params: string[]): Json {
  const op: Json = {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(\w?)/g, (_m, c: string) => c.toUpperCase())}` || 'root',
    summary: `${route.method} ${route.path}`,
    tags: [route.path.startsWith('/api/') ? route.path.split('/')[2]! : 'dashboard'],
    'x-homefleet-access': route.access,
  };
  const parameters: Json[] = params.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  if (route.query) {
    const schema = jsonSchemaOf(route.query);
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    const required = new Set((schema.required ?? []) as string[]);
    for (const [name, property] of Object.entries(properties)) parameters.push({ name, in: 'query', required: required.has(name), schema: property });
  }
  if (parameters.length) op.parameters = parameters;
  if (route.body) op.requestBody = { required: true, content: json(jsonSchemaOf(route.body)) };

  const responses: Json = {};
  route.answers.forEach((answer, i) => {
    // The answer's schema, when the route gives one, describes its first (JSON) answer.
    const schema = i === 0 && route.answer ? jsonSchemaOf(route.answer, 'output') : undefined;
    const content = answer.contentType ? { [answer.contentType]: { schema: schema ?? { type: 'string' } } } : schema ? json(schema) : undefined;
    responses[String(answer.status)] = { description: answer.description, ...(content ? { content } : {}) };
  });
  if (route.body || route.query || params.length) responses['400'] = { $ref: '#/components/responses/BadRequest' };
  const tokens = route.credentials.includes('token');
  if (AGENT_CREDENTIALS.some((kind) => route.credentials.includes(kind))) {
    op.security = [{ agent: [] }];
    op.description = 'Agent endpoint: authenticated by the agent token of its kind (see the `agent` security scheme); no Origin needed.';
    responses['401'] = { $ref: '#/components/responses/Unauthorized' };
    responses['403'] = { $ref: '#/components/responses/Forbidden' };
    responses['429'] = { $ref: '#/components/responses/TooManyRequests' };
  } else if (route.access === 'public' || route.access === 'machine') {
    op.security = [];
    if (route.access === 'machine') op.description = 'Machine endpoint: authenticated by its own token (or none), as its section of the README says; no Origin needed.';
  } else {
    op.security = tokens ? [{ session: [] }, { bearer: [] }] : [{ session: [] }];
    op.description = `Needs the capability \`${route.access}\`.`;
    responses['401'] = { $ref: '#/components/responses/Unauthorized' };
    responses['403'] = { $ref: '#/components/responses/Forbidden' };
    if (tokens) responses['429'] = { $ref: '#/components/responses/TooManyRequests' };
  }
  if (params.length) responses['404'] = { $ref: '#/components/responses/NotFound' };
  op.responses = responses;
  return op;
}

/** The OpenAPI 3.1 document of every route in the route table: its declaration in the route map, with the schemas that validate it. */
export function buildOpenApiDocument(routes: readonly RouteRecord[], version: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const { path, params } = openApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, params);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'homefleet',
      version,
      description:
        'The API of a homefleet server. Errors are JSON: `{"error": "…"}`, or `{"errors": [{"field", "message"}]}` for invalid fields. Scripts authenticate with `Authorization: Bearer hfp_…`. Every answer carries `X-Request-Id`: the request\'s own when it sent a well-formed one, else a new UUID; the audit entry of a change names the request that made it by this id.',
    },
    servers: [{ url: '/' }],
    components,
    paths,
  };
}
