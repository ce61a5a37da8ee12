import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPABILITIES } from '../server/contract/access.js';
import { ROUTES } from '../server/contract/routes/index.js';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.stop());

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[]; group?: { served: string[] } };
}

/** Every method+path Express will actually serve, however it was registered: its own routes, and the route table's groups (server/http/route-match.ts). */
function servedRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          if (method !== '_all') found.push(`${method.toUpperCase()} ${layer.route.path}`);
        }
      } else if (layer.handle?.group) found.push(...layer.handle.group.served);
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return found.sort();
}

describe('route declarations', () => {
  it('every route declares a known capability, public or machine', () => {
    const allowed = new Set<string>([...CAPABILITIES, 'public', 'machine']);
    expect(server.routes.length).toBeGreaterThan(0);
    for (const route of server.routes) expect(allowed, `${route.method} ${route.path}`).toContain(route.access);
  });

  it('the route table registers exactly the routes the route map declares', () => {
    const registered = server.routes.map((r) => `${r.method} ${r.path}`).sort();
    expect(registered).toEqual(Object.keys(ROUTES).sort());
    expect(new Set(registered).size).toBe(registered.length);
  });

  it('no route is served that was not declared through the route table', () => {
    const declared = server.routes.map((r) => `${r.method} ${r.path}`).sort();
    expect(servedRoutes(server.app)).toEqual(declared);
  });

  it('the registry writes need fleet.operate and its reads fleet.read', () => {
    const access = Object.fromEntries(server.routes.map((r) => [`${r.method} ${r.path}`, r.access]));
    expect(access).toMatchObject({
      'GET /api/health': 'public',
      'GET /api/instances': 'fleet.read',
      'GET /api/instances/stacks': 'fleet.read',
      'GET /api/instances/:vmid': 'fleet.read',
      'GET /api/instances/:vmid/history': 'fleet.read',
      'POST /api/instances': 'fleet.operate',
      'PUT /api/instances/:vmid': 'fleet.operate',
      'DELETE /api/instances/:vmid': 'fleet.operate',
    });
  });

  it('an unknown API path is a JSON 404', async () => {
    const res = await server.client.get('/api/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not found' });
  });
});
