import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInstance } from '../../test/helpers/factories.js';
import { agentDir, enrolledHost } from '../../test/helpers/hosts.js';
import type { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import type { Role } from '../contract/access.js';

// One server for the file: each case makes what it acts on (an instance, a user, a host) and signs in
// an account of its own, so cases do not see each other's state; a server per case spent most of this
// file's time hashing the administrator's password again.
let server: TestServer;
beforeAll(async () => {
  // A database file, so that snapshots (which an in-memory database has none of) can be taken.
  server = await startServer({ dbPath: tempDbPath(), config: { telemetryToken: 't'.repeat(40), agentAllowHttp: true }, hosts: { agentDir: agentDir('1.1.0') } });
});
afterAll(async () => {
  await server.stop();
  removeTempDbs();
});

interface Case {
  name: string;
  allowed: Role[];
  /** Makes the request as `client`; may prepare state first through the administrator's client. */
  run(client: TestClient): Promise<{ status: number; body: unknown }>;
  success: number;
}

const everyone: Role[] = ['viewer', 'operator', 'administrator'];
const operators: Role[] = ['operator', 'administrator'];
const admins: Role[] = ['administrator'];

async function existing(): Promise<number> {
  const body = buildInstance();
  expect((await server.client.post('/api/instances', body)).status).toBe(201);
  return body.vmid as number;
}
async function target(): Promise<number> {
  return (await server.client.post('/api/users', { username: `t${Math.random().toString(36).slice(2, 8)}`, display_name: 'T', role: 'viewer' })).body.user.id;
}

/** A job to act on: the in-memory database seeds none, so the administrator restores one from a backup. */
async function aJob(): Promise<number> {
  const jobs = (await server.client.get('/api/jobs')).body as Array<{ id: number }>;
  if (jobs[0]) return jobs[0].id;
  const job = { id: 1, key: 'patchmon_sync', name: 'PatchMon sync', description: '', enabled: 0, schedule: 15, config: {} };
  expect((await server.client.post('/api/import', { version: 3, instances: [], jobs: [job] })).status).toBe(200);
  return job.id;
}

/** A host enrolled through the agent API (its agent runs 1.0.0; the server ships 1.1.0). */
async function aHost(): Promise<number> {
  return (await enrolledHost(server)).host_id;
}
async function anEnrollmentToken(): Promise<number> {
  return (await server.client.post('/api/hosts/enrollment-tokens', {})).body.id;
}

const cases: Case[] = [
  // Fleet, metrics, matches, operation summaries: everyone reads the registry.
  { name: 'GET /api/instances', allowed: everyone, success: 200, run: (c) => c.get('/api/instances') },
  { name: 'GET /api/instances/stacks', allowed: everyone, success: 200, run: (c) => c.get('/api/instances/stacks') },
  { name: 'GET /api/instances/:vmid', allowed: everyone, success: 200, run: async (c) => c.get(`/api/instances/${await existing()}`) },
  { name: 'GET /api/instances/:vmid/history', allowed: everyone, success: 200, run: async (c) => c.get(`/api/instances/${await existing()}/history`) },
  // Deploy, start, stop, remove servers: operators and administrators write instances.
  { name: 'POST /api/instances', allowed: operators, success: 201, run: (c) => c.post('/api/instances', buildInstance()) },
  { name: 'PUT /api/instances/:vmid', allowed: operators, success: 200, run: async (c) => c.put(`/api/instances/${await existing()}`, { state: 'testing' }) },
  { name: 'DELETE /api/instances/:vmid', allowed: operators, success: 204, run: async (c) => c.delete(`/api/instances/${await existing()}`) },
  // Fleet reads also cover the job list and a job with its runs (config redacted).
  { name: 'GET /api/jobs', allowed: everyone, success: 200, run: (c) => c.get('/api/jobs') },
  { name: 'GET /api/jobs/:id', allowed: everyone, success: 200, run: async (c) => c.get(`/api/jobs/${await aJob()}`) },
  // Running a job is an operation; with no config the run fails at once (500, recorded) without contacting anything.
  { name: 'POST /api/jobs/:id/run', allowed: operators, success: 500, run: async (c) => c.post(`/api/jobs/${await aJob()}/run`) },
  // Server keys and global settings: job settings and secrets, export (raw secrets), import (replaces everything).
  { name: 'PUT /api/jobs/:id', allowed: admins, success: 200, run: async (c) => c.put(`/api/jobs/${await aJob()}`, { schedule: 30 }) },
  { name: 'GET /api/export', allowed: admins, success: 200, run: (c) => c.get('/api/export') },
  { name: 'POST /api/import', allowed: admins, success: 200, run: (c) => c.post('/api/import', { version: 3, instances: [] }) },
  // Database snapshots are the whole database (password hashes, secrets): settings.manage.
  { name: 'GET /api/snapshots', allowed: admins, success: 200, run: (c) => c.get('/api/snapshots') },
  { name: 'POST /api/snapshots', allowed: admins, success: 201, run: (c) => c.post('/api/snapshots') },
  {
    name: 'GET /api/snapshots/:name',
    allowed: admins,
    success: 200,
    run: async (c) => c.get(`/api/snapshots/${(await server.client.post('/api/snapshots')).body.snapshot.name}`),
  },
  // Scripts, configs, collections: provisioning reports, summaries for viewers, the reports themselves for operators.
  { name: 'GET /api/usage/summary', allowed: everyone, success: 200, run: (c) => c.get('/api/usage/summary') },
  { name: 'GET /api/usage', allowed: operators, success: 200, run: (c) => c.get('/api/usage') },
  // Telemetry diagnostics.
  { name: 'GET /api/telemetry', allowed: operators, success: 200, run: (c) => c.get('/api/telemetry') },
  // Create users, change roles, disable accounts, reset passwords; the audit review.
  { name: 'GET /api/users', allowed: admins, success: 200, run: (c) => c.get('/api/users') },
  { name: 'POST /api/users', allowed: admins, success: 201, run: (c) => c.post('/api/users', { username: 'newcomer', display_name: 'N', role: 'viewer' }) },
  { name: 'PATCH /api/users/:id', allowed: admins, success: 200, run: async (c) => c.patch(`/api/users/${await target()}`, { role: 'operator' }) },
  { name: 'POST /api/users/:id/reset-password', allowed: admins, success: 200, run: async (c) => c.post(`/api/users/${await target()}/reset-password`) },
  { name: 'POST /api/users/:id/revoke-sessions', allowed: admins, success: 204, run: async (c) => c.post(`/api/users/${await target()}/revoke-sessions`) },
  { name: 'GET /api/audit', allowed: admins, success: 200, run: (c) => c.get('/api/audit') },
  { name: 'GET /api/users/second-factors', allowed: admins, success: 200, run: (c) => c.get('/api/users/second-factors') },
  // Host setup, deletion, enrollment: everyone reads status, administrators manage.
  { name: 'GET /api/hosts', allowed: everyone, success: 200, run: (c) => c.get('/api/hosts') },
  { name: 'GET /api/hosts/:id', allowed: everyone, success: 200, run: async (c) => c.get(`/api/hosts/${await aHost()}`) },
  { name: 'GET /api/hosts/enrollment-tokens', allowed: everyone, success: 200, run: (c) => c.get('/api/hosts/enrollment-tokens') },
  { name: 'POST /api/hosts/enrollment-tokens', allowed: admins, success: 201, run: (c) => c.post('/api/hosts/enrollment-tokens', {}) },
  { name: 'DELETE /api/hosts/enrollment-tokens/:id', allowed: admins, success: 204, run: async (c) => c.delete(`/api/hosts/enrollment-tokens/${await anEnrollmentToken()}`) },
  { name: 'PATCH /api/hosts/:id', allowed: admins, success: 200, run: async (c) => c.patch(`/api/hosts/${await aHost()}`, { sync_registry: true }) },
  { name: 'DELETE /api/hosts/:id', allowed: admins, success: 202, run: async (c) => c.delete(`/api/hosts/${await aHost()}`) },
  { name: 'POST /api/hosts/:id/revoke-token', allowed: admins, success: 204, run: async (c) => c.post(`/api/hosts/${await aHost()}/revoke-token`) },
  { name: 'POST /api/hosts/:id/upgrade', allowed: admins, success: 202, run: async (c) => c.post(`/api/hosts/${await aHost()}/upgrade`, {}) },
  // Applying drift writes instances: an operation.
  { name: 'POST /api/hosts/:id/drift/apply', allowed: operators, success: 200, run: async (c) => c.post(`/api/hosts/${await aHost()}/drift/apply`, { all: true }) },
  // Own password, sign out.
  { name: 'GET /api/auth/session', allowed: everyone, success: 200, run: (c) => c.get('/api/auth/session') },
  { name: 'POST /api/auth/logout', allowed: everyone, success: 204, run: (c) => c.post('/api/auth/logout') },
  // Personal API tokens: one's own (self); everyone's only with users.manage.
  { name: 'GET /api/tokens', allowed: everyone, success: 200, run: (c) => c.get('/api/tokens') },
  { name: 'GET /api/tokens?user=all', allowed: admins, success: 200, run: (c) => c.get('/api/tokens?user=all') },
  { name: 'POST /api/tokens', allowed: everyone, success: 201, run: (c) => c.post('/api/tokens', { name: 'script', role: 'viewer' }) },
  {
    name: 'DELETE /api/tokens/:id',
    allowed: everyone,
    success: 204,
    run: async (c) => {
      const made = await c.post('/api/tokens', { name: 'script', role: 'viewer' });
      return c.delete(`/api/tokens/${made.body?.id ?? 1}`);
    },
  },
];

describe.each(everyone)('as %s', (role) => {
  it.each(cases.map((c) => [c.name, c] as const))(`%s`, async (_name, c) => {
    const client = await server.signIn(role);
    const res = await c.run(client);
    if (c.allowed.includes(role)) {
      expect(res.status, JSON.stringify(res.body)).toBe(c.success);
    } else {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden' });
    }
  });

  it('changes their own password', async () => {
    const client = await server.signIn(role);
    const res = await client.post('/api/auth/password', { current_password: 'user-password-for-tests', new_password: 'another-password-1' });
    expect([res.status, res.body]).toEqual([200, { passkeys_added_since_last_change: [] }]);
    expect((await client.get('/api/auth/session')).status).toBe(200);
  });
});

describe('a viewer cannot write through any registry route', () => {
  it('and nothing changes', async () => {
    const vmid = await existing();
    const viewer = await server.signIn('viewer');
    const before = (await viewer.get('/api/instances')).body as unknown[];
    expect((await viewer.post('/api/instances', buildInstance())).status).toBe(403);
    expect((await viewer.put(`/api/instances/${vmid}`, { name: 'renamed' })).status).toBe(403);
    expect((await viewer.delete(`/api/instances/${vmid}`)).status).toBe(403);
    const list = (await viewer.get('/api/instances')).body as Array<{ vmid: number; name: string }>;
    expect(list).toEqual(before);
    expect(list.find((i) => i.vmid === vmid)?.name).toBe(`vm-${vmid}`);
  });
});

describe('without a session', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s is 401 authentication required', async (_name, c) => {
    const res = await c.run(server.anonymous());
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'authentication required' });
  });
});

describe('declared access of the access layer routes', () => {
  it('matches PRODUCT.md', () => {
    const access = Object.fromEntries(server.routes.map((r) => [`${r.method} ${r.path}`, r.access]));
    expect(access).toMatchObject({
      'GET /setup': 'public',
      'POST /setup': 'public',
      'POST /api/auth/login': 'public',
      'POST /api/auth/logout': 'self',
      'GET /api/auth/session': 'self',
      'POST /api/auth/password': 'self',
      'GET /api/users': 'users.manage',
      'POST /api/users': 'users.manage',
      'PATCH /api/users/:id': 'users.manage',
      'POST /api/users/:id/reset-password': 'users.manage',
      'POST /api/users/:id/revoke-sessions': 'users.manage',
      'GET /api/audit': 'users.manage',
      'POST /api/telemetry': 'machine',
      'GET /api/telemetry': 'diagnostics.read',
      'GET /api/tokens': 'self',
      'POST /api/tokens': 'self',
      'DELETE /api/tokens/:id': 'self',
      'GET /api/hosts': 'hosts.read',
      'GET /api/hosts/:id': 'hosts.read',
      'GET /api/hosts/enrollment-tokens': 'hosts.read',
      'POST /api/hosts/enrollment-tokens': 'hosts.manage',
      'DELETE /api/hosts/enrollment-tokens/:id': 'hosts.manage',
      'PATCH /api/hosts/:id': 'hosts.manage',
      'DELETE /api/hosts/:id': 'hosts.manage',
      'POST /api/hosts/:id/revoke-token': 'hosts.manage',
      'POST /api/hosts/:id/upgrade': 'hosts.manage',
      'POST /api/hosts/:id/drift/apply': 'fleet.operate',
      'POST /api/agent/enroll': 'machine',
      'POST /api/agent/heartbeat': 'machine',
      'POST /api/agent/receipts/:operation_id': 'machine',
      'GET /api/agent/releases/manifest.json': 'public',
      'GET /api/agent/releases/manifest.json.sig': 'public',
      'GET /api/agent/releases/:version/host-agent.sh': 'public',
      'GET /install/agent.sh': 'public',
    });
  });
});
