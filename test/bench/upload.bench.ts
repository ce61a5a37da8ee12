// Upload throughput (PRODUCT.md "Host storage, downloads and the file cache", issue 37): a 2 GiB file
// POSTed to the built server's /api/files (dist/server/main.js in its own process: session-free token
// auth, busboy, SHA-256, the cache's room, the rename and the row), against a bare floor: a node:http
// server in its own process streaming the same bytes to a file while hashing them
// (test/bench/upload-floor.mjs). The load comes from a lean client process (test/bench/upload-client.mjs)
// that generates the bytes as it sends them. Rounds alternate floor and homefleet (ABBA); the ratio is
// of the best throughput of each. Prints the ratio (goal ≥ 0.8) and the server's RSS rise over its idle
// baseline during the uploads (goal ≤ 32 MB). Run with
// `npx vitest run --config test/bench/vitest.config.ts test/bench/upload.bench.ts`; UPLOAD_BENCH_MIB
// sets the size (default 2048), UPLOAD_BENCH_ROUNDS the rounds (default 2).
// All traffic goes to servers this file starts on 127.0.0.1; every file it writes is removed.
import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBuiltServer, type BuiltServer } from '../helpers/built-server.js';
import { TestClient } from '../helpers/http.js';

const MIB = Number(process.env.UPLOAD_BENCH_MIB ?? 2048);
const ROUNDS = Number(process.env.UPLOAD_BENCH_ROUNDS ?? 2);
const SIZE = MIB * 1024 * 1024;
const SETUP_TOKEN = 'bench-upload-setup-token-0123456789';
const PASSWORD = 'bench-upload-password';
const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-upload-'));
const floorDir = path.join(dir, 'floor');
fs.mkdirSync(floorDir);

let server: BuiltServer | undefined;
let floor: ReturnType<typeof execa> | undefined;
afterAll(async () => {
  await server?.stop();
  floor?.kill('SIGTERM');
  await floor?.catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** CPU seconds (user + system) the process has used: less swayed by other work on the machine than a rate. */
const cpuSeconds = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One upload from the client process; its throughput in MiB/s. */
async function send(url: string, token?: string): Promise<{ mibPerS: number; body: string }> {
  const run = await execa(process.execPath, [path.join(root, 'test/bench/upload-client.mjs')], {
    env: { URL: url, SIZE: String(SIZE), ...(token ? { TOKEN: token } : {}) },
    reject: false,
  });
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { status: number; seconds: number; body: string };
  if (result.status !== 201) throw new Error(`upload to ${url}: ${run.stdout} ${run.stderr}`);
  return { mibPerS: MIB / result.seconds, body: result.body };
}

describe('upload benchmark', () => {
  it(`a ${MIB} MiB upload: throughput ≥ 0.8 of a bare streaming floor, RSS rise ≤ 32 MB`, async () => {
    server = await startBuiltServer({ DB_PATH: path.join(dir, 'fleet.db'), FLEET_SETUP_TOKEN: SETUP_TOKEN, FLEET_AUTH_ALLOW_HTTP: 'true' });
    const pid = server.child.pid!;
    const admin = new TestClient(server.url);
    expect((await admin.post('/setup', { setup_token: SETUP_TOKEN, username: 'admin', display_name: 'Admin', password: PASSWORD })).status).toBe(201);
    expect((await admin.post('/api/auth/login', { username: 'admin', password: PASSWORD })).status).toBe(200);
    const token = (await admin.post('/api/tokens', { name: 'upload bench', role: 'administrator' })).body.token as string;
    const api = new TestClient(server.url, { authorization: `Bearer ${token}` });

    floor = execa(process.execPath, [path.join(root, 'test/bench/upload-floor.mjs')], { env: { DIR: floorDir }, reject: false });
    const floorPort = await new Promise<number>((resolve) => floor!.stdout!.once('data', (line: Buffer) => resolve(JSON.parse(line.toString()).port)));
    const floorUrl = `http://127.0.0.1:${floorPort}/`;
    const floorPid = floor.pid!;
    const floorIdle = rssMb(floorPid);
    let floorPeak = floorIdle;

    // Idle baseline: signed in, a token made, nothing uploading.
    await sleep(1000);
    const idleSamples: number[] = [];
    for (let i = 0; i < 5; i++) (idleSamples.push(rssMb(pid)), await sleep(200));
    const idle = Math.max(...idleSamples);
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMb(pid));
      floorPeak = Math.max(floorPeak, rssMb(floorPid));
    }, 50);

    const best = { floor: 0, homefleet: 0 };
    const cpu = { floor: Infinity, homefleet: Infinity };
    const runFloor = async () => {
      const before = cpuSeconds(floorPid);
      best.floor = Math.max(best.floor, (await send(floorUrl)).mibPerS);
      cpu.floor = Math.min(cpu.floor, cpuSeconds(floorPid) - before);
      for (const name of fs.readdirSync(floorDir)) fs.rmSync(path.join(floorDir, name));
    };
    const runHomefleet = async () => {
      const before = cpuSeconds(pid);
      const { mibPerS, body } = await send(`${server!.url}/api/files`, token);
      best.homefleet = Math.max(best.homefleet, mibPerS);
      cpu.homefleet = Math.min(cpu.homefleet, cpuSeconds(pid) - before);
      const { id, size } = JSON.parse(body) as { id: number; size: number };
      expect(size).toBe(SIZE);
      expect((await api.delete(`/api/files/${id}`)).status).toBe(204);
    };
    try {
      // ABBA: floor, homefleet, homefleet, floor, … so that drift in the machine's load falls on both.
      for (let round = 0; round < ROUNDS; round++) {
        if (round % 2 === 0) (await runFloor(), await runHomefleet());
        else (await runHomefleet(), await runFloor());
      }
    } finally {
      clearInterval(sampler);
    }
    const ratio = best.homefleet / best.floor;
    const rise = peak - idle;
    console.log(
      [
        `upload of ${MIB} MiB, best of ${ROUNDS} rounds each: homefleet ${best.homefleet.toFixed(0)} MiB/s, floor ${best.floor.toFixed(0)} MiB/s, ratio ${ratio.toFixed(3)} (goal ≥ 0.8) ${ratio >= 0.8 ? 'met' : 'NOT MET'}`,
        `  server RSS: idle ${idle.toFixed(1)} MB, peak during uploads ${peak.toFixed(1)} MB, rise ${rise.toFixed(1)} MB (goal ≤ 32 MB) ${rise <= 32 ? 'met' : 'NOT MET'}`,
        `  CPU per GiB (least of the rounds): homefleet ${((cpu.homefleet * 1024) / MIB).toFixed(2)} s, floor ${((cpu.floor * 1024) / MIB).toFixed(2)} s`,
        `  floor RSS (for comparison): idle ${floorIdle.toFixed(1)} MB, rise ${(floorPeak - floorIdle).toFixed(1)} MB`,
      ].join('\n'),
    );
    expect(fs.readdirSync(path.join(dir, 'files'))).toEqual([]);
    expect(ratio).toBeGreaterThanOrEqual(0.8);
    expect(rise).toBeLessThanOrEqual(32);
  });
});
