
// Import memory benchmark: the built server (dist/server/main.js, as `npm start` runs it) on a
// database file, three back-to-back imports of a 100,000-instance backup (each with its pre-import
// snapshot), each replacing as many (a first import fills the empty registry and is not compared),
// and the server process's peak RSS (VmHWM, Linux) after each. Targets: <= 250 MB, and the third
// within 10% of the first. The import helper's own memory (server/import-helper.ts, a process of its
// own) is given back when it ends and is not counted. Prints; never fails on a number.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listeningUrl } from '../helpers/listening.js';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-bench-import-memory-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function memoryOf(pid: number): { peak: number; now: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
  } catch {
    return null;
  }
}

describe('import memory benchmark', () => {
  it('three imports of 100,000 instances in a row keep the server peak RSS flat', async () => {
    const token = 'b'.repeat(32);
    const server = spawn(process.execPath, ['dist/server/main.js'], {
      cwd: root,
      env: { ...process.env, DB_PATH: path.join(dir, 'homefleet.db'), PORT: '0', HOST: '127.0.0.1', FLEET_SETUP_TOKEN: token, FLEET_AUTH_ALLOW_HTTP: 'true', LOG_LEVEL: 'info', FLEET_SNAPSHOT_INTERVAL_HOURS: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const url = await listeningUrl(server);
      const json = { 'content-type': 'application/json', origin: url };
      const setup = await fetch(`${url}/setup`, { method: 'POST', headers: json, body: JSON.stringify({ setup_token: token, username: 'bench', display_name: 'B', password: 'bench-password-1234' }) });
      expect(setup.status).toBe(201);
      const login = await fetch(`${url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ username: 'bench', password: 'bench-password-1234' }) });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const document = JSON.stringify({
        version: 3,
        exported_at: new Date().toISOString(),
        instances: Array.from({ length: 100_000 }, (_, i) => ({
          vmid: i + 1, name: `vm-${i + 1}`, state: ['deployed', 'testing', 'degraded'][i % 3], stack: i % 4 ? 'development' : 'production',
          tailscale_ip: '', atlas: 0, argus: 1, semaphore: 0, patchmon: 1, tailscale: 0, andromeda: 0, hardware_acceleration: 0,
          created_at: '2026-11-22T10:00:00Z', updated_at: '2026-11-22T10:00:00Z',
        })),
      });
      const lines = [`import memory, built server, ${(document.length / 1048576).toFixed(1)} MiB backup of 100,000 instances:`, `  idle: ${memoryOf(server.pid!)?.now.toFixed(0) ?? '?'} MB`];
      const peaks: number[] = [];
      for (let i = 0; i <= 3; i++) {
        const started = performance.now();
        const res = await fetch(`${url}/api/import`, { method: 'POST', headers: { ...json, cookie }, body: document });
        expect([res.status, await res.json()]).toEqual([200, { imported: 100_000 }]);
        const ms = performance.now() - started;
        const memory = memoryOf(server.pid!);
        if (memory && i > 0) peaks.push(memory.peak);
        lines.push(`  import ${i}${i === 0 ? ' (into the empty registry)' : ''}: ${ms.toFixed(0)} ms, peak RSS ${memory ? memory.peak.toFixed(0) : '? (no /proc)'} MB, RSS now ${memory ? memory.now.toFixed(0) : '?'} MB`);
      }
      if (peaks.length === 3) {
        lines.push(`  peak ${peaks[0]!.toFixed(0)} MB after the first (target <= 250), third ÷ first ${(peaks[2]! / peaks[0]!).toFixed(3)} (target <= 1.1)`);
      }
      console.log(`\n${lines.join('\n')}\n`);
    } finally {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
  });
});
