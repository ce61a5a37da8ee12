// The largest import POST /api/import accepts (64 MiB, PRODUCT.md "Speed"), sent to the built server
// while GET /api/health is polled: the import helper parses, checks and writes it in a process of its
// own (server/backup/import-process.ts), so the server keeps answering, reads see the registry whole
// as it was until the import commits, and a write sent meanwhile waits for the import instead of
// failing. Killed half-way, the helper writes nothing.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { healthTimes, whileHealthPolled } from './helpers/health-poll.js';
import { TestClient } from './helpers/http.js';
import { removeTempDbs, tempDbPath } from './helpers/tempdb.js';

const SETUP_TOKEN = 'import-largest-setup-token-0123456789';
const LIMIT = 64 * 1024 * 1024;

let server: Headless;
let admin: TestClient;
let anonymous: TestClient;

/** One instance of a backup, in `stack`, with a long name and tags. */
const row = (vmid: number, stack: 'production' | 'development') => ({
  vmid, name: `${stack.slice(0, 3)}-guest-${vmid}-${'x'.repeat(40)}`, state: 'deployed', stack, tailscale_ip: '',
  atlas: 1, argus: 0, semaphore: 1, patchmon: 0, tailscale: 1, andromeda: 0, hardware_acceleration: 0,
  tags: ['big-import', stack.slice(0, 3)], created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
});

/** A version-3 backup of `count` instances from vmid 100, or as many as fit under the import limit. */
function largestBackup(stack: 'production' | 'development', count = Infinity): { body: string; count: number } {
  const head = '{"version":3,"exported_at":"2026-11-29T00:00:00.000Z","instances":[';
  const rows: string[] = [];
  let size = head.length + 2;
  for (let vmid = 100; rows.length < count; vmid++) {
    const text = JSON.stringify(row(vmid, stack));
    if (size + text.length + 1 > LIMIT - 1024) break;
    rows.push(text);
    size += text.length + 1;
  }
  return { body: `${head}${rows.join(',')}]}`, count: rows.length };
}

beforeAll(async () => {
  await ensureBuilt();
  server = await startHeadless({ DB_PATH: tempDbPath(), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' }, { shared: true });
  admin = new TestClient(server.local);
  const [name, value] = (await setUpAdmin(server.local, SETUP_TOKEN)).split('=');
  admin.setCookie(name!, value!);
  anonymous = new TestClient(server.local);
});

afterAll(async () => {
  await server?.stop();
  removeTempDbs();
});

describe('the largest import the built server accepts', () => {
  // A bound on wall time: one retry (test/README.md "Bounds on wall time"); every check holds for a retry's imports too.
  it('is written while the server keeps answering; reads see it whole or not at all; a write sent meanwhile waits for it', { timeout: 90_000, retry: 1 }, async () => {
    const largest = largestBackup('development');
    expect(largest.body.length).toBeGreaterThan(LIMIT - 64 * 1024);
    expect(largest.count).toBeGreaterThan(150_000);
    const last = 100 + largest.count - 1;
    // The registry before: the first and the last vmid the import writes, in production.
    const before = await admin.post('/api/import', { version: 3, instances: [row(100, 'production'), row(last, 'production')] });
    expect(before.body, before.text).toEqual({ imported: 2 });

    const seen: string[] = [];
    const writes: Array<{ vmid: number; status: number; sentBeforeImportAnswered: boolean; answeredAfterImport: boolean }> = [];
    let importing = true;
    const reader = (async () => {
      while (importing) {
        // The first row the import writes, then its last: under a commit of the whole, never the new first with the old last.
        const firstOne = await admin.get(`/api/instances/100`);
        const lastOne = await admin.get(`/api/instances/${last}`);
        seen.push(`${firstOne.status} ${firstOne.body?.stack}, ${lastOne.status} ${lastOne.body?.stack}`);
      }
    })();
    const writer = (async () => {
      for (let vmid = 900_000; importing; vmid++) {
        const sentBeforeImportAnswered = importing;
        const res = await admin.post('/api/instances', { vmid, name: `during-${vmid}`, state: 'testing', stack: 'development' });
        writes.push({ vmid, status: res.status, sentBeforeImportAnswered, answeredAfterImport: !importing });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const over = await whileHealthPolled(anonymous, async () => {
      try {
        return await admin.post('/api/import', largest.body);
      } finally {
        importing = false;
      }
    });
    await Promise.all([reader, writer]);
    expect(over.result.status, over.result.text).toBe(200);
    expect(over.result.body).toEqual({ imported: largest.count });
    expect(over.slowest, healthTimes(over, 'the import')).toBeLessThan(1_000);

    // Before the commit, the old registry whole; after it, the new one: never a mixture, never a gap.
    expect(seen.length).toBeGreaterThan(3);
    const whole = ['200 production, 200 production', '200 production, 200 development', '200 development, 200 development'];
    expect([...new Set(seen)].filter((s) => !whole.includes(s))).toEqual([]);
    // Writes waited for the import rather than failing on its lock (a 503). One that came before the
    // import began was replaced by it; one held until it committed is kept, as is any answered after it.
    expect(writes.map((w) => w.status)).toEqual(writes.map(() => 201));
    const kept = await Promise.all(writes.map(async (w) => ({ ...w, kept: (await admin.get(`/api/instances/${w.vmid}`)).status === 200 })));
    for (const w of kept.filter((x) => x.answeredAfterImport)) expect(w.kept, JSON.stringify(w)).toBe(true);
    expect(kept.filter((w) => w.sentBeforeImportAnswered && w.kept).length, JSON.stringify(kept)).toBeGreaterThan(0);

    // One change log entry for each import, and the large one's history rows.
    const entries = (await admin.get('/api/audit?limit=200')).body as Array<{ subject: { type: string } | null; detail: { imported?: number } }>;
    expect(entries.filter((e) => e.subject?.type === 'backup').map((e) => e.detail.imported).slice(0, 2)).toEqual([largest.count, 2]);
    expect(((await admin.get(`/api/instances/${last}/history`)).body as Array<{ field: string }>).map((h) => h.field)).toEqual(['imported']);
  });

  it('killed in its helper half-way, writes nothing: the server answers 500 naming it, keeps serving, and the next import goes in', { timeout: 60_000 }, async () => {
    const before = (await admin.get('/api/instances/100')).body as { name: string };
    const body = largestBackup('production', 60_000).body;
    // Bytes the helper has written: none while it parses and checks, the WAL's pages once it writes.
    const written = (pid: string) => {
      try {
        return Number(/^wchar: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
      } catch {
        return 0;
      }
    };
    // The server's import helpers (other tests' servers have their own).
    const helpers = () =>
      fs.readdirSync('/proc').filter((pid) => {
        try {
          const parent = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
          return parent === server.child.pid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('import-helper');
        } catch {
          return false;
        }
      });
    expect(helpers()).toEqual([]);
    const answer = admin.post('/api/import', body);
    // Killed once its transaction spills pages into the WAL: the write is under way, not committed.
    const killed = await new Promise<string>((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        const [pid] = helpers();
        if (pid && written(pid) > 1024 * 1024) {
          clearInterval(poll);
          process.kill(Number(pid), 'SIGKILL');
          resolve(pid);
        } else if (Date.now() - started > 30_000) {
          clearInterval(poll);
          reject(new Error('no import helper was seen writing'));
        }
      }, 2);
    });
    const res = await answer;
    expect([res.status, res.body], killed).toEqual([500, { error: 'nothing was imported: the import helper stopped (SIGKILL)' }]);
    expect(helpers()).toEqual([]);
    expect((await admin.get('/api/instances/100')).body.name).toBe(before.name);
    expect((await admin.post('/api/import', { instances: [{ vmid: 7, name: 'after', state: 'testing', stack: 'development' }] })).body).toEqual({ imported: 1 });
    expect((await admin.get('/api/instances/stacks')).body).toEqual(['development']);
  });
});
