import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { accountsWithTokens } from '../helpers/accounts-db.js';
import { startHeadless } from '../helpers/headless.js';
import { openUnread } from '../helpers/sse.js';

// `npx vitest run --config test/bench/vitest.config.ts test/bench/streams-memory.bench.ts`:
// the built server in its own process; 1,000 event streams that never read (95 viewers and
// 5 administrators, 10 streams each, two API tokens apiece) while instances change; prints the
// server's RSS before the streams, with them open and idle, and after the changes were sent to them.
// STREAMS_BENCH_CHANGES sets the number of changes (3,000); STREAMS_BENCH_PER_TOKEN=0 runs the same
// changes with no stream open, the baseline.
const VIEWERS = 95;
const ADMINS = 5;
const PER_TOKEN = Number(process.env.STREAMS_BENCH_PER_TOKEN ?? 5);
const CHANGES = Number(process.env.STREAMS_BENCH_CHANGES) || 3000;
const lines: string[] = [];
afterAll(() => console.log(`\n${lines.join('\n')}\n`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

describe('event streams that are never read', () => {
  it(`${(VIEWERS + ADMINS) * 2 * PER_TOKEN} unread streams while ${CHANGES} changes are sent: the server's RSS`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-streams-bench-'));
    const dbPath = path.join(dir, 'bench.db');
    // Two tokens each (5 streams a token, 10 an account); the first administrator's third token writes.
    const accounts = Array.from({ length: VIEWERS + ADMINS }, (_, i) => ({ username: `u${i}`, role: i < VIEWERS ? ('viewer' as const) : ('administrator' as const), tokens: i === VIEWERS ? 3 : 2 }));
    const made = await accountsWithTokens(dbPath, accounts);
    const admin = made[VIEWERS]!.pop()!;
    const tokens = made.flat();
    const server = await startHeadless({ DB_PATH: dbPath, FLEET_SNAPSHOT_INTERVAL_HOURS: 'off' });
    const pid = server.child.pid!;
    const url = server.url;
    const port = Number(new URL(url).port);
    const sockets: net.Socket[] = [];
    try {
      const write = (method: string, p: string, body: unknown) =>
        fetch(url + p, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      for (let i = 0; i < 20; i++) expect((await write('POST', '/api/instances', { vmid: 100 + i, name: `vm-${i}`, state: 'deployed', stack: 'development' })).status).toBe(201);
      await sleep(500);
      const before = rssMiB(pid);

      const statuses: number[] = [];
      for (const token of tokens) {
        for (let k = 0; k < PER_TOKEN; k++) {
          const { status, socket } = await openUnread(port, { authorization: `Bearer ${token}` });
          statuses.push(status);
          sockets.push(socket);
        }
      }
      await sleep(500);
      const open = rssMiB(pid);

      const pad = 'x'.repeat(180);
      let peak = open;
      const started = Date.now();
      for (let i = 0; i < CHANGES; i += 10) {
        const batch = [];
        for (let j = i; j < Math.min(CHANGES, i + 10); j++) batch.push(write('PUT', `/api/instances/${100 + (j % 20)}`, { name: `${pad}-${j}` }).then((r) => r.status));
        expect(new Set(await Promise.all(batch))).toEqual(new Set([200]));
        if (i % 500 === 0) peak = Math.max(peak, rssMiB(pid));
      }
      const seconds = (Date.now() - started) / 1000;
      await sleep(1000);
      const after = rssMiB(pid);
      peak = Math.max(peak, after);
      await sleep(15_000);
      const settled = rssMiB(pid);
      const dropped = server.log().filter((l) => /client too far behind/.test(l.msg)).length;
      lines.push(
        `unread event streams: ${statuses.filter((s) => s === 200).length} opened (${statuses.length} asked), ${CHANGES} changes in ${seconds.toFixed(1)} s`,
        `server RSS before the streams        ${before.toFixed(1)} MiB`,
        `server RSS, streams open, idle       ${open.toFixed(1)} MiB`,
        `server RSS, after the changes        ${after.toFixed(1)} MiB (peak seen ${peak.toFixed(1)} MiB)`,
        `server RSS, 16 s later               ${settled.toFixed(1)} MiB`,
        `streams the server dropped           ${dropped}`,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
