import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../test/helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.stop());

describe('jobs and backup routes', () => {
  it('declare the capabilities PRODUCT.md assigns them', () => {
    const access = Object.fromEntries(server.routes.map((r) => [`${r.method} ${r.path}`, r.access]));
    expect(access).toMatchObject({
      'GET /api/jobs': 'fleet.read',
      'GET /api/jobs/:id': 'fleet.read',
      'PUT /api/jobs/:id': 'settings.manage',
      'POST /api/jobs/:id/run': 'fleet.operate',
      'GET /api/export': 'settings.manage',
      'POST /api/import': 'settings.manage',
    });
  });

  it('the import accepts a body over 1 MiB; other JSON routes do not', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ vmid: i + 1, name: `host-${i + 1}`, state: 'deployed', stack: 'development' }));
    const body = { version: 3, instances: rows };
    expect(JSON.stringify(body).length).toBeGreaterThan(1024 * 1024);
    expect((await server.client.post('/api/import', body)).body).toEqual({ imported: 20_000 });
    const big = await server.client.put('/api/jobs/1', { config: { pad: 'x'.repeat(1024 * 1024 + 10) } });
    expect(big.status).toBe(413);
  });
});
