import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRetained } from '../server/db/database.js';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// The built server commits the transactions of one turn of its event loop together (group commit,
// server/db/tx.ts) and holds every answer until that commit (server/http/after-commit.ts). Seen from
// outside: the moment a client has its answer, another connection to the database finds the change
// and its audit row, however many clients write at once.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-group-commit-'));
const dbPath = path.join(dir, 'homefleet.db');
const SETUP_TOKEN = 'group-commit-setup-token';

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('answers after commit', () => {
  it('a change is in the database, with its audit row, when its 201 arrives; a refused one in a busy turn leaves the rest whole', { timeout: 60_000 }, async () => {
    const server = await startHeadless({ DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_SNAPSHOT_INTERVAL_HOURS: '0' });
    const cookie = await setUpAdmin(server.url, SETUP_TOKEN);
    const reader = openRetained(dbPath, { readonly: true });
    const stored = reader.prepare<[number], { name: string; history: number; audit: number }>(
      `SELECT i.name, (SELECT count(*) FROM instance_history h WHERE h.instance_id = i.id) AS history,
              (SELECT count(*) FROM audit_log a WHERE a.subject_type = 'instance' AND a.subject_id = CAST(i.vmid AS TEXT)) AS audit
         FROM instances i WHERE i.vmid = ?`,
    );
    try {
      const headers = { cookie, origin: server.url };
      const missing: string[] = [];
      let conflicts = 0;
      // 8 clients, each with its next create as soon as it has an answer; every fourth create repeats
      // a vmid already taken, so refused transactions share turns with accepted ones.
      await Promise.all(
        Array.from({ length: 8 }, async (_, client) => {
          for (let i = 0; i < 40; i++) {
            const vmid = 10_000 + client * 1_000 + (i % 4 === 3 ? i - 1 : i);
            const answer = await rawRequest(server.url, 'POST', '/api/instances', headers, { vmid, name: `group-${vmid}`, state: 'deployed', stack: 'development' });
            if (answer.status === 409) {
              conflicts++;
              continue;
            }
            expect(answer.status).toBe(201);
            // Read at once, on another connection: an answer sent before its commit shows up here as missing.
            const row = stored.get(vmid);
            if (row?.name !== `group-${vmid}` || row.history !== 1 || row.audit !== 1) missing.push(`${vmid}: ${JSON.stringify(row)}`);
          }
        }),
      );
      expect(missing).toEqual([]);
      expect(conflicts).toBe(8 * 10);
      expect(reader.prepare('SELECT count(*) FROM instances').pluck().get()).toBe(8 * 30);
      expect(reader.prepare("SELECT count(*) FROM audit_log WHERE subject_type = 'instance'").pluck().get()).toBe(8 * 30);
    } finally {
      reader.close();
      await server.stop();
    }
  });
});
