import express from 'express';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { errorMiddleware } from '../errors.js';
import { answer, route } from '../contract/route.js';
import { RouteTable } from '../http/routes.js';
import { CAPABILITIES, ROLE_TABLE, ROLES, roleHas, type Capability, type Role } from '../contract/access.js';

/** PRODUCT.md's "Capabilities" table, written out again so a change to the map has to change this too. */
const PRODUCT_TABLE: Record<Capability, Record<Role, boolean>> = {
  'fleet.read': { viewer: true, operator: true, administrator: true },
  'diagnostics.read': { viewer: false, operator: true, administrator: true },
  'fleet.operate': { viewer: false, operator: true, administrator: true },
  'content.read': { viewer: true, operator: true, administrator: true },
  'content.manage': { viewer: false, operator: true, administrator: true },
  'hosts.read': { viewer: true, operator: true, administrator: true },
  'hosts.manage': { viewer: false, operator: false, administrator: true },
  'settings.manage': { viewer: false, operator: false, administrator: true },
  'users.manage': { viewer: false, operator: false, administrator: true },
  self: { viewer: true, operator: true, administrator: true },
};

describe('the capability map', () => {
  it('has a row for every capability and nothing else', () => {
    expect(Object.keys(ROLE_TABLE).sort()).toEqual([...CAPABILITIES].sort());
  });

  it.each(CAPABILITIES.flatMap((c) => ROLES.map((r) => [c, r] as const)))('%s for %s is as PRODUCT.md says', (capability, role) => {
    expect(roleHas(role, capability)).toBe(PRODUCT_TABLE[capability][role]);
  });
});

/**
 * Every capability through the real guard: a route per capability on a table guarded like the app's,
 * sharing its database and sessions. Job settings, export and import (settings.manage) come from
 * another feature; this is where the rule they rely on is checked.
 */
describe('the guard enforces every row for every role', () => {
  let server: TestServer;
  let probe: ReturnType<express.Express['listen']>;
  let probeUrl: string;
  const sessions = new Map<Role, string>();

  beforeAll(async () => {
    server = await startServer();
    const probes = Object.fromEntries(
      CAPABILITIES.flatMap((c) => [`GET /probe/${c}`, `POST /probe/${c}`]).map((key) => [key, route({ answers: [answer<{ ok: string }>(200, 'ok')] })]),
    );
    const table = new RouteTable(server.authenticate, probes);
    for (const capability of CAPABILITIES) {
      table.on(`GET /probe/${capability}`, { access: capability }, () => ({ ok: capability }));
      table.on(`POST /probe/${capability}`, { access: capability }, () => ({ ok: capability }));
    }
    const app = express();
    app.use(table.router);
    app.use(errorMiddleware(server.context.logger));
    probe = app.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    for (const role of ROLES) sessions.set(role, (await server.signIn(role)).cookieHeader());
  });
  afterAll(async () => {
    probe.closeAllConnections();
    await new Promise((resolve) => probe.close(resolve));
    await server.stop();
  });

  it.each(CAPABILITIES.flatMap((c) => ROLES.map((r) => [c, r] as const)))('%s as %s', async (capability, role) => {
    const client = new TestClient(probeUrl, { cookie: sessions.get(role)! });
    const allowed = PRODUCT_TABLE[capability][role];
    for (const res of [await client.get(`/probe/${capability}`), await client.post(`/probe/${capability}`, {})]) {
      expect(res.status).toBe(allowed ? 200 : 403);
      expect(res.body).toEqual(allowed ? { ok: capability } : { error: 'forbidden' });
    }
  });

  it.each(CAPABILITIES)('%s without a session is 401', async (capability) => {
    const res = await new TestClient(probeUrl).get(`/probe/${capability}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'authentication required' });
  });
});
