import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-request-id-'));
const SETUP_TOKEN = 'request-id-setup-token';

beforeAll(async () => {
  await ensureBuilt();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a request id ties the answer, the log line and the audit entry together (built server)', () => {
  it('the caller’s X-Request-Id, or one made up, in all three', async () => {
    const server = await startHeadless({ DB_PATH: path.join(dir, 'homefleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' });
    try {
      const cookie = await setUpAdmin(server.url, SETUP_TOKEN);
      const browser = { cookie, origin: server.url };
      const given = await rawRequest(server.url, 'POST', '/api/instances', { ...browser, 'x-request-id': 'proxy-7f3a' }, { vmid: 101, name: 'web', state: 'deployed', stack: 'development' });
      expect([given.status, given.headers['x-request-id']]).toEqual([201, 'proxy-7f3a']);
      const made = await rawRequest(server.url, 'PUT', '/api/instances/101', { ...browser, 'x-request-id': 'not\tokay' }, { state: 'testing' });
      const madeId = made.headers['x-request-id'] as string;
      expect(madeId).toMatch(/^[0-9a-f-]{36}$/);

      const line = await server.logLine((l) => l.msg === 'request' && l.request_id === 'proxy-7f3a');
      expect(line).toMatchObject({ method: 'POST', path: '/api/instances', status: 201 });
      expect(await server.logLine((l) => l.msg === 'request' && l.request_id === madeId)).toMatchObject({ method: 'PUT', status: 200 });

      const audit = (await rawRequest(server.url, 'GET', '/api/audit', browser)).body as Array<{ request_id: string | null; detail: { method?: string } }>;
      expect(audit.filter((e) => e.detail.method).map((e) => [e.detail.method, e.request_id])).toEqual([
        ['PUT', madeId],
        ['POST', 'proxy-7f3a'],
      ]);
    } finally {
      await server.stop();
    }
  });
});
