// Upload throughput (PRODUCT.md "Host storage, downloads and the file cache", issue 37): a 2 GiB file
// POSTed to the built server's /api/files (dist/server/main.js in its own process: session-free token
// auth, busboy, SHA-256, the cache's room, the rename and the row), against a bare floor: a node:http
// server in its own process streaming the same bytes to a file while hashing them
// (test/bench/upload-floor.mjs). The load comes from a lean client process (test/bench/upload-client.mjs)
// that generates the bytes as it sends them. Rounds alternate floor and homefleet (ABBA); the ratio is
// of the best throughput of each. Prints the ratio (goal ≥ 0.8) and the server's RSS rise over its idle
// baseline during the uploads (goal ≤ 32 MB). Then the agent's side: the same file pushed to a host, its
// fetch cut at half-way and resumed as the agent resumes it (curl with a Range), which must transfer
// only the second half and join into the file's SHA-256. Run with
// `npx vitest run --config test/bench/vitest.config.ts test/bench/upload.bench.ts`; UPLOAD_BENCH_MIB
// sets the size (default 2048), UPLOAD_BENCH_ROUNDS the rounds (default 2).
// All traffic goes to servers this file starts on 127.0.0.1; every file it writes is removed.
import { execa } from 'execa';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentServerEnv, firstAdministrator, startBuiltServer, type BuiltServer } from '../helpers/built-server.js';
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
let token = '';
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
  let api: TestClient;
  /** Signed in: enrollment tokens are made from a browser session only. */
  let admin: TestClient;
  beforeAll(async () => {
    server = await startBuiltServer(agentServerEnv(dir, SETUP_TOKEN), (process.env.UPLOAD_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean));
    admin = await firstAdministrator(server.url, SETUP_TOKEN, PASSWORD);
    token = (await admin.post('/api/tokens', { name: 'upload bench', role: 'administrator' })).body.token as string;
    api = new TestClient(server.url, { authorization: `Bearer ${token}` });
  });

  it(`a ${MIB} MiB upload: throughput ≥ 0.8 of a bare streaming floor, RSS rise ≤ 32 MB`, async () => {
    const pid = server!.child.pid!;
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

  it(`an agent's fetch of the ${MIB} MiB file, cut at half-way, resumes with Range and transfers only the second half`, async () => {
    const { body } = await send(`${server!.url}/api/files`, token);
    const file = JSON.parse(body) as { id: number; size: number; sha256: string };
    const host = await enrolledHost(admin);
    const push = await api.post(`/api/hosts/${host.id}/storage/local/files`, { file_id: file.id, content: 'iso' });
    expect(push.status, push.text).toBe(202);
    const url = `${server!.url}/api/agent/files/${file.id}`;
    const part = path.join(dir, 'fetched.partial');

    // The cut: the connection is dropped once half the bytes have come, and the part keeps exactly those.
    const half = Math.floor(SIZE / 2);
    const first = await cutAt(url, host.token, part, half);
    expect(first).toBe(half);

    // The resume, as the agent makes it (reporter/host-agent.sh: curl asking for `Range: bytes=<have>-`
    // and appending; `-C -` takes <have> from the part's size).
    const started = performance.now();
    const resumed = await execa('curl', ['-sS', '--fail', '-C', '-', '-o', part, '-H', `authorization: Bearer ${host.token}`, '-w', '%{http_code} %{size_download}', url], { reject: false });
    const seconds = (performance.now() - started) / 1000;
    const [code, downloaded] = resumed.stdout.trim().split(' ').map(Number);
    if (resumed.exitCode !== 0) console.log(`curl: exit ${resumed.exitCode}: ${resumed.stderr}`);
    const whole = await execa('sha256sum', [part]);
    console.log(
      `resumed fetch of ${MIB} MiB: first try cut at ${half} bytes; the resume answered ${code} and transferred ${downloaded} bytes (${((100 * downloaded!) / SIZE).toFixed(1)} % of the file) in ${seconds.toFixed(1)} s; SHA-256 of the joined file ${whole.stdout.split(' ')[0] === file.sha256 ? 'matches' : 'DOES NOT match'}`,
    );
    expect(code).toBe(206);
    expect(downloaded).toBe(SIZE - half);
    expect(fs.statSync(part).size).toBe(SIZE);
    expect(whole.stdout.split(' ')[0]).toBe(file.sha256);
    fs.rmSync(part);
  });
});

/** A host enrolled through the API that has beaten with one storage holding ISO images. */
async function enrolledHost(admin: TestClient): Promise<{ id: number; token: string }> {
  const enrollment = await admin.post('/api/hosts/enrollment-tokens', { name: 'upload bench' });
  expect(enrollment.status, enrollment.text).toBe(201);
  const anonymous = new TestClient(server!.url);
  const enrolled = await anonymous.post('/api/agent/enroll', { hostname: 'pve-bench', machine_id: 'upload-bench', agent_version: '1.0.0' }, { authorization: `Bearer ${enrollment.body.token}` });
  expect(enrolled.status, enrolled.text).toBe(201);
  const host = { id: enrolled.body.host_id as number, token: enrolled.body.host_token as string };
  const storages = [{ storage: 'local', type: 'dir', content: ['iso'], avail: 4 * SIZE, total: 8 * SIZE, active: true, shared: false }];
  const beat = await new TestClient(server!.url, { authorization: `Bearer ${host.token}` }).post('/api/agent/heartbeat', {
    agent_version: '1.0.0',
    started_at: new Date().toISOString(),
    hostname: 'pve-bench',
    addresses: ['192.0.2.10'],
    uptime_s: 60,
    hypervisor_version: 'pve-manager/8.2.4',
    guests: [],
    storages,
  });
  expect(beat.status, beat.text).toBe(200);
  return host;
}

/** GETs `url` into `file` and drops the connection once `bytes` have come; answers how many the file keeps. */
function cutAt(url: string, token: string, file: string, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = fs.createWriteStream(file);
    let kept = 0;
    const req = http.get(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`fetch answered ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        if (kept >= bytes) return;
        const take = chunk.subarray(0, bytes - kept);
        kept += take.length;
        out.write(take);
        if (kept >= bytes) (req.destroy(), out.end(() => resolve(kept)));
      });
    });
    req.on('error', (err) => {
      if (kept < bytes) reject(err);
    });
  });
}
