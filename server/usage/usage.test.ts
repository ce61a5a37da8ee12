import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, type ManualClock } from '../../test/helpers/clock.js';
import type { TestClient } from '../../test/helpers/http.js';
import { startServer, type TestServer } from '../../test/helpers/server.js';
import { INGEST_LIMIT } from './routes.js';

let server: TestServer;
let api: TestClient;
let clock: ManualClock;

beforeEach(async () => {
  clock = manualClock();
  server = await startServer({ clock });
  api = server.client;
});
afterEach(() => server.stop());

const ID = '3b241101-e2bb-4255-8caf-4136c566a962';

/** A start report as reporter/usage-report.sh sends it for a container. */
function startReport(overrides: Record<string, unknown> = {}) {
  return {
    ct_type: 1,
    type: 'lxc',
    disk_size: 8,
    core_count: 2,
    ram_size: 2048,
    os_type: 'debian',
    os_version: '12',
    disableip6: 'no',
    nsapp: 'homeassistant',
    method: 'default',
    pve_version: '8.2.4',
    status: 'installing',
    random_id: ID,
    ...overrides,
  };
}

/** Ingestion as a provisioning script does it: no session, no Origin. */
function ingest(path: string, body: unknown, headers: Record<string, string> = {}) {
  return api.fresh().post(`/api/usage${path}`, body, { origin: '', ...headers });
}

async function reports() {
  const res = await api.get('/api/usage');
  expect(res.status).toBe(200);
  return res.body.reports;
}

describe('POST /api/usage/upload', () => {
  it('stores the start report as an installing record and answers 201', async () => {
    const res = await ingest('/upload', startReport());
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ status: 'recorded' });
    expect(await reports()).toEqual([
      {
        id: 1,
        ...startReport(),
        error: null,
        created_at: '2026-11-22T10:00:00Z',
        updated_at: '2026-11-22T10:00:00Z',
      },
    ]);
  });

  it('takes a VM report with null sizes and defaults the texts a script left out', async () => {
    const res = await ingest('/upload', { type: 'vm', ct_type: 2, disk_size: null, status: 'installing', random_id: ID });
    expect(res.status).toBe(201);
    expect((await reports())[0]).toMatchObject({
      type: 'vm',
      ct_type: 2,
      disk_size: null,
      core_count: null,
      ram_size: null,
      os_type: '',
      disableip6: '',
      nsapp: '',
      pve_version: 'not found',
      status: 'installing',
    });
  });

  it('needs no session and no Origin header', async () => {
    const res = await api.fresh().request('POST', '/api/usage/upload', startReport(), { origin: '' });
    expect(res.status).toBe(201);
  });

  it('rejects a random_id that is not a UUID with 400 and stores nothing', async () => {
    const res = await ingest('/upload', startReport({ random_id: 'not-a-uuid' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ field: 'random_id', message: 'must be a UUID' }] });
    expect(await reports()).toEqual([]);
  });

  it.each([
    ['type', { type: 'docker' }, 'must be lxc or vm'],
    ['status', { status: 'done' }, 'must be installing'],
    ['disk_size', { disk_size: '8G' }, 'must be a number or null'],
    ['ct_type', { ct_type: 1.5 }, 'must be an integer or null'],
    ['nsapp', { nsapp: 'x'.repeat(129) }, 'must be at most 128 characters'],
  ])('rejects an invalid %s with 400', async (field, overrides, message) => {
    const res = await ingest('/upload', startReport(overrides));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: [{ field, message }] });
  });

  it('answers a second start report for the same random_id with 409 and keeps the first', async () => {
    await ingest('/upload', startReport());
    const res = await ingest('/upload', startReport({ nsapp: 'other' }));
    expect(res.status).toBe(409);
    expect((await reports()).map((r: { nsapp: string }) => r.nsapp)).toEqual(['homeassistant']);
  });

  it('refuses a body over 16 KiB with 413', async () => {
    const res = await ingest('/upload', startReport({ nsapp: 'x'.repeat(17 * 1024) }));
    expect(res.status).toBe(413);
    expect(await reports()).toEqual([]);
  });

  it('refuses malformed JSON with 400 and a non-JSON content type with 415', async () => {
    expect((await ingest('/upload', '{"type":')).status).toBe(400);
    const res = await ingest('/upload', 'type=lxc', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
  });
});

describe('POST /api/usage/upload/updatestatus', () => {
  it('sets the final status and error of the record with that random_id', async () => {
    await ingest('/upload', startReport());
    clock.advance(90_000);
    const res = await ingest('/upload/updatestatus', { status: 'done', error: 'none', random_id: ID });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'updated' });
    expect((await reports())[0]).toMatchObject({
      status: 'done',
      error: 'none',
      created_at: '2026-11-22T10:00:00Z',
      updated_at: '2026-11-22T10:01:30Z',
    });
  });

  it('defaults status to failed and error to "No error message"', async () => {
    await ingest('/upload', startReport());
    expect((await ingest('/upload/updatestatus', { random_id: ID })).status).toBe(200);
    expect((await reports())[0]).toMatchObject({ status: 'failed', error: 'No error message' });
  });

  it('matches the random_id whatever its letter case', async () => {
    await ingest('/upload', startReport());
    expect((await ingest('/upload/updatestatus', { status: 'done', random_id: ID.toUpperCase() })).status).toBe(200);
    expect((await reports())[0].status).toBe('done');
  });

  it('answers 404 for an unknown random_id and stores nothing', async () => {
    const res = await ingest('/upload/updatestatus', { status: 'done', random_id: ID });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'usage report not found' });
    expect(await reports()).toEqual([]);
  });

  it('bounds status and error lengths and requires a UUID', async () => {
    await ingest('/upload', startReport());
    const long = await ingest('/upload/updatestatus', { status: 's'.repeat(33), error: 'e'.repeat(2001), random_id: ID });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({
      errors: [
        { field: 'status', message: 'must be at most 32 characters' },
        { field: 'error', message: 'must be at most 2000 characters' },
      ],
    });
    expect((await ingest('/upload/updatestatus', { random_id: 42 })).status).toBe(400);
    expect((await reports())[0]).toMatchObject({ status: 'installing', error: null });
  });

  it('keeps any text in the error intact', async () => {
    await ingest('/upload', startReport());
    const error = 'line "one"\n\tC:\\path \u0001 échec ✗';
    await ingest('/upload/updatestatus', { status: 'failed', error, random_id: ID });
    expect((await reports())[0].error).toBe(error);
  });
});

describe('ingestion throttling', () => {
  it(`allows ${INGEST_LIMIT.limit} requests a window per peer address, then 429 with Retry-After, then a new window`, async () => {
    for (let i = 0; i < INGEST_LIMIT.limit; i++) {
      const res = await ingest('/upload/updatestatus', { random_id: ID });
      expect(res.status).toBe(404);
    }
    const refused = await ingest('/upload', startReport());
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe(String(INGEST_LIMIT.windowMs / 1000));
    expect(refused.body).toEqual({ error: 'too many attempts, try again later' });
    clock.advance(INGEST_LIMIT.windowMs);
    expect((await ingest('/upload', startReport())).status).toBe(201);
  });

  it('does not count operator reads against the ingestion budget', async () => {
    for (let i = 0; i < INGEST_LIMIT.limit + 5; i++) await api.get('/api/usage/summary');
    expect((await ingest('/upload', startReport())).status).toBe(201);
  });
});

describe('GET /api/usage and /api/usage/summary', () => {
  async function seed() {
    const apps = ['jellyfin', 'homeassistant', 'jellyfin', 'pihole', 'jellyfin'];
    const ids = apps.map((_, i) => `00000000-0000-4000-8000-00000000000${i}`);
    for (const [i, nsapp] of apps.entries()) await ingest('/upload', startReport({ nsapp, random_id: ids[i] }));
    await ingest('/upload/updatestatus', { status: 'done', random_id: ids[0] });
    await ingest('/upload/updatestatus', { status: 'done', random_id: ids[1] });
    await ingest('/upload/updatestatus', { status: 'failed', error: 'boom', random_id: ids[2] });
  }

  const counts = {
    total: 5,
    by_nsapp: [
      { key: 'jellyfin', count: 3 },
      { key: 'homeassistant', count: 1 },
      { key: 'pihole', count: 1 },
    ],
    by_status: [
      { key: 'done', count: 2 },
      { key: 'installing', count: 2 },
      { key: 'failed', count: 1 },
    ],
  };

  it('lists recent reports newest first in pages, with counts by nsapp and status', async () => {
    await seed();
    const first = await api.get('/api/usage?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.reports.map((r: { id: number }) => r.id)).toEqual([5, 4]);
    expect(first.body.next_before).toBe(4);
    expect(first.body.counts).toEqual(counts);
    const second = await api.get('/api/usage?limit=2&before=4');
    expect(second.body.reports.map((r: { id: number }) => r.id)).toEqual([3, 2]);
    const last = await api.get('/api/usage?limit=2&before=2');
    expect(last.body.reports.map((r: { id: number }) => r.id)).toEqual([1]);
    expect(last.body.next_before).toBeNull();
  });

  it('rejects an invalid limit or before with 400', async () => {
    for (const query of ['limit=0', 'limit=501', 'limit=x', 'before=abc']) {
      const res = await api.get(`/api/usage?${query}`);
      expect(res.status, query).toBe(400);
    }
  });

  it('gives the summary as counts only', async () => {
    await seed();
    const res = await api.get('/api/usage/summary');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...counts, retention: { max_age_days: 180, max_reports: 100_000 } });
  });

  it('declares ingestion machine, the list content.manage and the summary content.read', () => {
    const access = Object.fromEntries(server.routes.map((r) => [`${r.method} ${r.path}`, r.access]));
    expect(access).toMatchObject({
      'POST /api/usage/upload': 'machine',
      'POST /api/usage/upload/updatestatus': 'machine',
      'GET /api/usage': 'content.manage',
      'GET /api/usage/summary': 'content.read',
    });
  });
});
