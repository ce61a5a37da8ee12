import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRetained } from '../server/db/database.js';
import { ensureBuilt } from './helpers/build.js';
import { setUpAdmin, startHeadless, type Headless } from './helpers/headless.js';
import { rawRequest } from './helpers/raw.js';

// Issue 26: "No audit row is written outside the transaction of the change it records (a test that
// kills the process between the two finds none missing)". The built server takes a stream of
// management writes from several clients at once and is killed (SIGKILL) at a random moment, again
// and again; after each kill the database must hold an audit row for every change it holds.
// The checks read only what entries always had (action, target, detail), so the same test run
// against an older build finds the rows that build wrote after its transactions.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-audit-kill-'));
const dbPath = path.join(dir, 'homefleet.db');
const SETUP_TOKEN = 'audit-kill-setup-token';
const ROUNDS = Number(process.env.AUDIT_KILL_ROUNDS ?? 10);
const INSTANCE_WORKERS = 4;

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const env = { DB_PATH: dbPath, FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_SNAPSHOT_INTERVAL_HOURS: '0' };

interface Sent {
  requestIds: Set<string>;
  /** Per job: the schedules its committed updates set, in order, and after a kill the one in flight (each value is set once). */
  schedules: Map<number, number[]>;
  /** Per vmid: the PUTs sent for it (one at a time, after its create). */
  vmids: Map<number, { updates: number }>;
}

/** One client's stream: each request waits for the previous answer, so at most its last one is in flight when the kill comes. */
async function instanceStream(server: Headless, cookie: string, first: number, sent: Sent, stop: () => boolean): Promise<void> {
  const headers = (id: string) => ({ cookie, origin: server.url, 'x-request-id': id });
  for (let vmid = first; !stop(); vmid++) {
    const steps: Array<[string, string, unknown]> = [
      ['POST', '/api/instances', { vmid, name: `kill-${vmid}`, state: 'deployed', stack: 'development' }],
      ['PUT', `/api/instances/${vmid}`, { state: 'testing' }],
      ['PUT', `/api/instances/${vmid}`, { name: `renamed-${vmid}` }],
      ['DELETE', `/api/instances/${vmid}`, undefined],
    ];
    sent.vmids.set(vmid, { updates: 0 });
    for (const [i, [method, url, body]] of steps.entries()) {
      const id = `kill-${vmid}-${i}`;
      sent.requestIds.add(id);
      if (method === 'PUT') sent.vmids.get(vmid)!.updates++;
      const answer = await rawRequest(server.url, method, url, headers(id), body).catch(() => undefined);
      if (!answer) return;
      expect(answer.status, `${method} ${url}`).toBeLessThan(300);
    }
  }
}

/** A job's stream: every update sets a schedule never set before (20, 21, …; a job's schedule is at most 10080 minutes). */
async function jobStream(server: Headless, cookie: string, jobId: number, sent: Sent, stop: () => boolean): Promise<void> {
  const schedules = sent.schedules.get(jobId) ?? [];
  sent.schedules.set(jobId, schedules);
  while (!stop()) {
    const schedule = 20 + schedules.length;
    if (schedule > 10_080) return;
    const id = `kill-job-${jobId}-${schedule}`;
    sent.requestIds.add(id);
    schedules.push(schedule);
    const answer = await rawRequest(server.url, 'PUT', `/api/jobs/${jobId}`, { cookie, origin: server.url, 'x-request-id': id }, { schedule }).catch(() => undefined);
    if (!answer) return;
    expect(answer.status).toBe(200);
  }
}

type Row = { target: string | null; method: string | null; fields: number | null };

function missingAuditRows(sent: Sent): string[] {
  const db = openRetained(dbPath, { readonly: true });
  const problems: string[] = [];
  try {
    expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    const rows = db
      .prepare<[], Row>("SELECT target, json_extract(detail, '$.method') AS method, json_array_length(detail, '$.fields') AS fields FROM audit_log WHERE action = 'request'")
      .all();
    const count = (target: string, method: string, changed = false) => rows.filter((r) => r.target === target && r.method === method && (!changed || (r.fields ?? 0) > 0)).length;

    for (const [vmid, { updates }] of sent.vmids) {
      const target = `instance ${vmid}`;
      const created = count(target, 'POST');
      const changed = count(target, 'PUT', true);
      const deleted = count(target, 'DELETE');
      const instance = db.prepare<[number], { id: number }>('SELECT id FROM instances WHERE vmid = ?').get(vmid);
      if (instance) {
        const history = db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM instance_history WHERE instance_id = ? AND field != 'created'").get(instance.id)!.n;
        if (created !== 1) problems.push(`${target} exists, ${created} create entries`);
        if (changed !== history) problems.push(`${target} has ${history} changes in its history, ${changed} update entries`);
        if (deleted !== 0) problems.push(`${target} exists, yet a delete entry`);
      } else {
        // Gone: never created, or deleted after all its updates; either way the entries say the same.
        if (created !== deleted) problems.push(`${target} is gone: ${created} create and ${deleted} delete entries`);
        if (deleted === 1 && changed !== updates) problems.push(`${target} was deleted after ${updates} updates, ${changed} update entries`);
      }
    }

    // Each update sets a schedule no other one sets: the stored one says how many committed. The
    // update in flight when the server was killed is dropped from the list when it did not commit.
    for (const [jobId, schedules] of sent.schedules) {
      const stored = db.prepare<[number], { schedule: number }>('SELECT schedule FROM jobs WHERE id = ?').get(jobId)!.schedule;
      schedules.splice(schedules.indexOf(stored) + 1);
      const committed = schedules.length;
      const entries = count(`job ${jobId}`, 'PUT');
      if (entries !== committed) problems.push(`job ${jobId}: ${committed} updates committed (schedule ${stored}), ${entries} entries`);
    }
  } finally {
    db.close();
  }
  return problems;
}

describe('audit rows and the changes they record (built server, SIGKILL)', () => {
  it('after a kill at any moment, every committed change has its audit row, and every row its change', { timeout: 180_000 }, async () => {
    let server = await startHeadless(env);
    const cookie = await setUpAdmin(server.url, SETUP_TOKEN);
    const jobs = ((await rawRequest(server.url, 'GET', '/api/jobs', { cookie })).body as Array<{ id: number; schedule: number }>).map((j) => j.id);
    expect(jobs.length).toBe(3);
    const sent: Sent = { requestIds: new Set(), schedules: new Map(), vmids: new Map() };

    for (let round = 0; round < ROUNDS; round++) {
      if (round > 0) server = await startHeadless(env);
      let stopped = false;
      const stop = () => stopped;
      const streams = [
        ...Array.from({ length: INSTANCE_WORKERS }, (_, w) => instanceStream(server, cookie, (round * INSTANCE_WORKERS + w + 1) * 100_000, sent, stop)),
        ...jobs.map((id) => jobStream(server, cookie, id, sent, stop)),
      ];
      // The kill falls at a random point counted in requests, not in time: on a loaded machine a
      // fixed delay may end a round before anything was written, and the check would prove nothing.
      const killAfter = sent.requestIds.size + 15 + Math.floor(Math.random() * 40);
      const deadline = Date.now() + 30_000;
      while (sent.requestIds.size < killAfter && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      server.child.kill('SIGKILL');
      stopped = true;
      await server.child;
      await Promise.all(streams);
      expect(missingAuditRows(sent), `round ${round}`).toEqual([]);
    }

    // Something was written, and every entry names a request the clients sent.
    const db = openRetained(dbPath, { readonly: true });
    try {
      const ids = db.prepare<[], string | null>("SELECT request_id FROM audit_log WHERE action = 'request'").pluck().all();
      expect(ids.length).toBeGreaterThan(ROUNDS * 10);
      expect(ids.filter((id) => id === null || !sent.requestIds.has(id))).toEqual([]);
    } finally {
      db.close();
    }
  });
});
