import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { KEEP_EVENTS } from './repo.js';

const TOKEN = 'telemetry-token-of-at-least-32-characters';
const servers: TestServer[] = [];
async function start(telemetryToken: string | null = TOKEN) {
  const server = await startServer({ config: { telemetryToken: telemetryToken ?? undefined } });
  servers.push(server);
  return server;
}
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

const bearer = { authorization: `Bearer ${TOKEN}` };

describe('POST /api/telemetry', () => {
  it('accepts one object or an array of objects with 202 {accepted: n}, by either header, with no session or Origin', async () => {
    const server = await start();
    const one = await server.anonymous().post('/api/telemetry', { kind: 'boot', players: 3 }, { ...bearer, origin: '' });
    expect(one.status).toBe(202);
    expect(one.body).toEqual({ accepted: 1 });
    const many = await server.anonymous().post('/api/telemetry', [{ kind: 'a' }, { kind: 'b' }], { 'x-fleet-telemetry-token': TOKEN });
    expect(many.body).toEqual({ accepted: 2 });
    const listed = await server.client.get('/api/telemetry');
    expect(listed.body.map((e: { event: unknown }) => e.event)).toEqual([{ kind: 'b' }, { kind: 'a' }, { kind: 'boot', players: 3 }]);
  });

  it('is 503 when FLEET_TELEMETRY_TOKEN is unset', async () => {
    const server = await start(null);
    const res = await server.anonymous().post('/api/telemetry', { kind: 'x' }, bearer);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'telemetry ingestion disabled' });
  });

  it.each([
    ['no token', {}],
    ['a wrong bearer token', { authorization: `Bearer ${TOKEN}x` }],
    ['a wrong header token', { 'x-fleet-telemetry-token': 'nope' }],
    ['the token as a cookie', { cookie: `token=${TOKEN}` }],
    ['Basic instead of Bearer', { authorization: `Basic ${TOKEN}` }],
  ])('is 401 for %s and stores nothing', async (_what, headers) => {
    const server = await start();
    const res = await server.anonymous().post(`/api/telemetry?token=${TOKEN}`, { kind: 'x', token: TOKEN }, headers as Record<string, string>);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'invalid telemetry token' });
    expect((await server.client.get('/api/telemetry')).body).toEqual([]);
  });

  it('rejects a wrong token before reading the body: a 5 MB body gets 401, not 413', async () => {
    const server = await start();
    const url = new URL('/api/telemetry', server.baseUrl);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(5 * 1024 * 1024), authorization: 'Bearer wrong' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      // Only the headers and a first chunk are sent: the answer must come without the rest of the body.
      req.write('{"kind":"');
    });
    expect(status).toBe(401);
  });

  it('is 415 for a content type other than JSON and 400 for a body that is not objects', async () => {
    const server = await start();
    const text = await server.anonymous().post('/api/telemetry', 'kind=x', { ...bearer, 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    for (const body of ['[1,2]', '"x"', '[]', '{"a":', 'null']) {
      const res = await server.anonymous().post('/api/telemetry', body, bearer);
      expect(res.status, body).toBe(400);
    }
    const large = await server.anonymous().post('/api/telemetry', { blob: 'x'.repeat(1024 * 1024 + 10) }, bearer);
    expect(large.status).toBe(413);
  });

  it.each(['42', '"text"', 'true', 'null', '[1,2]', '[{"a":1},3]'])('answers %s, valid JSON but not objects, with what the body must be', async (body) => {
    const server = await start();
    const res = await server.anonymous().post('/api/telemetry', body, bearer);
    expect([res.status, res.body]).toEqual([400, { errors: [{ field: 'body', message: 'must be a JSON object or an array of objects' }] }]);
    expect((await server.client.get('/api/telemetry')).body).toEqual([]);
  });

  it('refuses an event nested deeper than 64 levels with 400, not a 500 from storing it', async () => {
    const server = await start();
    const nested = (n: number) => `{"deep":${'['.repeat(n)}${']'.repeat(n)}}`;
    expect((await server.anonymous().post('/api/telemetry', nested(60), bearer)).status).toBe(202);
    for (const body of [nested(65), nested(20_000), `[${nested(100_000)}]`]) {
      const res = await server.anonymous().post('/api/telemetry', body, bearer);
      expect([res.status, res.body]).toEqual([400, { errors: [{ field: 'body', message: 'must not be nested more than 64 levels deep' }] }]);
    }
  });

  it('still answers malformed JSON as malformed', async () => {
    const server = await start();
    const res = await server.anonymous().post('/api/telemetry', '{"a":', bearer);
    expect([res.status, res.body]).toEqual([400, { error: 'malformed JSON body' }]);
  });

  it(`keeps the newest ${KEEP_EVENTS} events`, async () => {
    const server = await start();
    const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ n: from + i }));
    for (let from = 0; from < KEEP_EVENTS + 50; from += 2500) {
      expect((await server.anonymous().post('/api/telemetry', batch(from, Math.min(2500, KEEP_EVENTS + 50 - from)), bearer)).status).toBe(202);
    }
    const count = server.db.prepare('SELECT count(*) AS n, min(json_extract(payload, \'$.n\')) AS low FROM telemetry_events').get();
    expect(count).toEqual({ n: KEEP_EVENTS, low: 50 });
  });
});

describe('GET /api/telemetry', () => {
  it('pages newest first with limit and before', async () => {
    const server = await start();
    await server.anonymous().post('/api/telemetry', Array.from({ length: 5 }, (_, n) => ({ n })), bearer);
    const first = await server.client.get('/api/telemetry?limit=2');
    expect(first.body.map((e: { event: { n: number } }) => e.event.n)).toEqual([4, 3]);
    expect(first.body[0]).toEqual({ id: 5, received_at: expect.stringMatching(/\.\d{3}Z$/), event: { n: 4 } });
    const next = await server.client.get(`/api/telemetry?limit=2&before=${first.body[1].id}`);
    expect(next.body.map((e: { event: { n: number } }) => e.event.n)).toEqual([2, 1]);
    expect((await server.client.get('/api/telemetry?limit=abc')).status).toBe(400);
  });
});
