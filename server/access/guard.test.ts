import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';

let server: TestServer;
beforeEach(async () => {
  server = await startServer({ dbPath: tempDbPath() });
});
afterEach(async () => {
  await server.stop();
  removeTempDbs();
});

describe('answers to session requests are never cached', () => {
  it('every session route answers Cache-Control: no-store and Vary: Cookie, also when refused', async () => {
    await server.client.post('/api/instances', buildInstance({ vmid: 102 }));
    const answers = {
      export: await server.client.get('/api/export'),
      users: await server.client.get('/api/users'),
      audit: await server.client.get('/api/audit'),
      session: await server.client.get('/api/auth/session'),
      instances: await server.client.get('/api/instances'),
      instance: await server.client.get('/api/instances/102'),
      jobs: await server.client.get('/api/jobs'),
      create: await server.client.post('/api/instances', buildInstance({ vmid: 103 })),
      notFound: await server.client.get('/api/instances/999'),
      anonymous: await server.anonymous().get('/api/export'),
      viewer: await (await server.signIn('viewer')).get('/api/export'),
    };
    for (const [name, res] of Object.entries(answers)) {
      expect(res.headers.get('cache-control'), name).toBe('no-store');
      expect(res.headers.get('vary'), name).toBe('Cookie');
    }
    expect([answers.export.status, answers.anonymous.status, answers.viewer.status]).toEqual([200, 401, 403]);
  });
});

describe('audit entries', () => {
  const audit = async () => (await server.client.get('/api/audit')).body as Array<{ action: string; target: string | null; detail: Record<string, unknown> }>;

  it('a user creation appears once, as user.create; the other account actions once each too', async () => {
    const created = await server.client.post('/api/users', { username: 'alice', display_name: 'Alice', role: 'viewer' });
    const id = created.body.user.id as number;
    await server.client.patch(`/api/users/${id}`, { role: 'operator' });
    await server.client.post(`/api/users/${id}/reset-password`);
    await server.client.post(`/api/users/${id}/revoke-sessions`);
    expect((await audit()).map((e) => [e.action, e.target])).toEqual([
      ['user.revoke_sessions', 'alice'],
      ['user.reset_password', 'alice'],
      ['user.update', 'alice'],
      ['user.create', 'alice'],
      ['login.success', 'admin'],
      ['user.create', 'admin'],
    ]);
  });

  it('a request entry names its target ("instance 102", "job 2") and the fields it changed, never values', async () => {
    await server.client.post('/api/instances', buildInstance({ vmid: 102, state: 'deployed' }));
    await server.client.put('/api/instances/102', { state: 'testing', name: 'renamed' });
    const job = (await server.client.get('/api/jobs')).body[1];
    await server.client.put(`/api/jobs/${job.id}`, { enabled: false, config: { api_token: 'secret-value-1', api_url: 'http://127.0.0.1:9/hosts' } });
    await server.client.delete('/api/instances/102');
    const entries = (await audit()).filter((e) => e.action === 'request');
    expect(entries.map((e) => [e.target, e.detail])).toEqual([
      ['instance 102', { method: 'DELETE', path: '/api/instances/102', status: 204 }],
      // `enabled: false` was sent to a job already disabled: not a change, not named.
      [`job ${job.id}`, { method: 'PUT', path: `/api/jobs/${job.id}`, status: 200, name: job.name, fields: ['config.api_url', 'config.api_token'] }],
      ['instance 102', { method: 'PUT', path: '/api/instances/102', status: 200, fields: ['name', 'state'] }],
      ['instance 102', { method: 'POST', path: '/api/instances', status: 201 }],
    ]);
    expect(JSON.stringify(await audit())).not.toContain('secret-value-1');
  });
});
