// Heartbeats of 500 hosts with 50 guests each (PRODUCT.md: every 30 s), against a bare node:http +
// better-sqlite3 server that parses the same body and writes the same rows (host facts, guest list)
// in one transaction. Run with `npx vitest run --config test/bench/vitest.config.ts test/bench/heartbeat.bench.ts`.
// All traffic goes to servers this file starts on 127.0.0.1; every loop is bounded.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { openDatabase } from '../../server/db/database.js';
import { TestClient } from '../helpers/http.js';
import { compare, listen, load, report, serveApp } from './harness.js';

const HOSTS = 500;
const GUESTS = 50;
const INTERVAL_S = 30;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-hb-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function body(host: number, round: number, changing: boolean) {
  return JSON.stringify({
    agent_version: '1.0.0',
    started_at: '2026-11-22T09:00:00Z',
    hostname: `pve${host}`,
    addresses: [`192.0.2.${host % 250}`],
    uptime_s: 1000 + round * INTERVAL_S,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: Array.from({ length: GUESTS }, (_, g) => ({
      vmid: host * 1000 + g + 1,
      name: `guest-${host}-${g}`,
      type: g % 2 ? 'lxc' : 'qemu',
      // "changing": one guest's status flips every round, so the stored list must be rewritten.
      status: changing && g === round % GUESTS ? (round % 2 ? 'stopped' : 'running') : 'running',
    })),
  });
}

describe('heartbeat benchmark', () => {
  it(`${HOSTS} hosts x ${GUESTS} guests: heartbeat cost against a bare insert of the same rows`, async () => {
    // homefleet: a temp-file database, 500 hosts enrolled through the API.
    const homefleet = createApp({
      dbPath: path.join(dir, 'homefleet.db'),
      config: { authAllowHttp: true, agentAllowHttp: true },
      hosts: { agentDir: dir },
    });
    await homefleet.accounts.create({ username: 'bench', display_name: 'Bench', role: 'administrator', password: 'bench-password-1234' });
    const server = await serveApp(homefleet.app);
    const admin = new TestClient(server.url);
    expect((await admin.post('/api/auth/login', { username: 'bench', password: 'bench-password-1234' })).status).toBe(200);
    const enrollment = (await admin.post('/api/hosts/enrollment-tokens', { max_uses: HOSTS })).body.token as string;
    const tokens: string[] = [];
    for (let i = 0; i < HOSTS; i++) {
      const res = await admin.post('/api/agent/enroll', { hostname: `pve${i}`, machine_id: `bench-${i}`, agent_version: '1.0.0' }, { authorization: `Bearer ${enrollment}` });
      expect(res.status).toBe(201);
      tokens.push(res.body.host_token);
    }

    // The bare baseline: same schema, same rows, no authentication, validation or logic.
    const bare = openDatabase(path.join(dir, 'bare.db'));
    bare.transaction(() => {
      const insert = bare.prepare("INSERT INTO hosts (machine_id, hostname, enrolled_at, agent_version, heartbeat_interval_s) VALUES (?, ?, 0, '1.0.0', 30)");
      for (let i = 0; i < HOSTS; i++) insert.run(`bench-${i}`, `pve${i}`);
    })();
    const facts = bare.prepare(
      'UPDATE hosts SET hostname = ?, agent_version = ?, agent_started_at = ?, last_heartbeat_at = ?, addresses = ?, uptime_s = ?, hypervisor_version = ? WHERE id = ?',
    );
    const clear = bare.prepare('DELETE FROM host_guests WHERE host_id = ?');
    const insertGuest = bare.prepare('INSERT INTO host_guests (host_id, vmid, name, type, status) VALUES (?, ?, ?, ?, ?)');
    const write = bare.transaction((id: number, b: any) => {
      facts.run(b.hostname, b.agent_version, Date.parse(b.started_at), Date.now(), JSON.stringify(b.addresses), b.uptime_s, b.hypervisor_version, id);
      clear.run(id);
      for (const g of b.guests) insertGuest.run(id, g.vmid, g.name, g.type, g.status);
    });
    const bareServer = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const id = Number(req.headers['x-host']);
        write(id, JSON.parse(Buffer.concat(chunks).toString()));
        const out = JSON.stringify({ heartbeat_interval_s: INTERVAL_S, commands: [] });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
        res.end(out);
      });
    });

    const lines: string[] = [];
    for (const changing of [true, false]) {
      let round = 0;
      // One round is every host's heartbeat once: what the controller must absorb every 30 s.
      const bodies = () => {
        round++;
        return Array.from({ length: HOSTS }, (_, i) => body(i, round, changing));
      };
      const result = await compare(
        2,
        async () => {
          const b = bodies();
          return load(HOSTS, 8, (i) => fetch(`${bareServer.url}/hb`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-host': String(i + 1) }, body: b[i] }), 200);
        },
        async () => {
          const b = bodies();
          return load(HOSTS, 8, (i) => fetch(`${server.url}/api/agent/heartbeat`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[i]}` }, body: b[i] }), 200);
        },
      );
      const label = changing ? 'guest list changed every beat' : 'guest list unchanged';
      lines.push(report(`heartbeat ${HOSTS}x${GUESTS} (${label})`, result));
      const roundSeconds = HOSTS / result.candidate;
      lines.push(`  one round of ${HOSTS} heartbeats takes ${roundSeconds.toFixed(2)} s of the ${INTERVAL_S} s interval (${((roundSeconds / INTERVAL_S) * 100).toFixed(1)}% busy)`);
    }
    const stored = homefleet.db.prepare('SELECT count(*) FROM host_guests').pluck().get();
    expect(stored).toBe(HOSTS * GUESTS);
    console.log(`\n${lines.join('\n')}\n`);

    await bareServer.close();
    bare.close();
    await server.close();
    await homefleet.close();
  });
});
