import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { openDatabase } from '../db/database.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
afterAll(() => removeTempDbs());

/** The child fixture bundled to CommonJS, so NODE_PATH finds the installed better-sqlite3. */
async function buildChild(dir: string): Promise<string> {
  const outfile = path.join(dir, 'import-child.cjs');
  await esbuild.build({
    entryPoints: [path.join(root, 'test/fixtures/import-child.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    loader: { '.sql': 'text' },
    // What `import.meta.url` means in CommonJS, as the desktop app's bundle has it (build/build.mjs).
    inject: [path.join(root, 'build/cjs-import-meta.mjs')],
    define: { 'import.meta.url': 'importMetaUrl' },
    logLevel: 'warning',
  });
  return outfile;
}

const walSize = (dbPath: string) => (fs.existsSync(`${dbPath}-wal`) ? fs.statSync(`${dbPath}-wal`).size : 0);

describe('an import killed half-way', () => {
  it('leaves the old data whole: SIGKILL during a large import in another process', { timeout: 60_000 }, async () => {
    const dbPath = tempDbPath();
    const dir = path.dirname(dbPath);
    const server = await startServer({ dbPath });
    const old = Array.from({ length: 50 }, (_, i) => ({ vmid: i + 1, name: `old-${i + 1}`, state: 'deployed', stack: 'production', atlas: 1 }));
    expect((await server.client.post('/api/import', { instances: old })).body).toEqual({ imported: 50 });
    const before = (await server.client.get('/api/export')).body;
    await server.stop();

    const rows = Array.from({ length: 150_000 }, (_, i) => ({
      vmid: i + 1, name: `new-host-with-a-longer-name-${i + 1}`, state: 'testing', stack: 'development', tailscale_ip: `100.64.${(i >> 8) & 255}.${i & 255}`,
      atlas: 0, argus: 1, semaphore: 1, patchmon: 1, tailscale: 1, andromeda: 0, hardware_acceleration: 1,
      created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z',
    }));
    const backupPath = path.join(dir, 'big.json');
    fs.writeFileSync(backupPath, JSON.stringify({ version: 3, exported_at: '2026-01-01T00:00:00.000Z', instances: rows }));
    const child = spawn(process.execPath, [await buildChild(dir), dbPath, backupPath], {
      env: { ...process.env, NODE_PATH: path.join(root, 'node_modules') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));

    // Kill once the transaction has spilled pages into the WAL: the import is under way, not committed.
    const walAtStart = await new Promise<number>((resolve, reject) => {
      const poll = setInterval(() => {
        if (out.includes('importing')) {
          clearInterval(poll);
          resolve(walSize(dbPath));
        } else if (child.exitCode !== null) reject(new Error(`child exited early: ${err}`));
      }, 2);
    });
    await new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        if (walSize(dbPath) > walAtStart + 512 * 1024) {
          clearInterval(poll);
          child.kill('SIGKILL');
          resolve();
        } else if (out.includes('imported')) {
          clearInterval(poll);
          reject(new Error(`the import finished before it could be killed: ${out}`));
        }
      }, 1);
    });
    expect(await exited).toBe('SIGKILL');
    expect(out).not.toContain('imported');

    const db = openDatabase(dbPath);
    expect(db.prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');
    db.close();
    const after = await startServer({ dbPath });
    try {
      const now = (await after.client.get('/api/export')).body;
      expect({ ...now, exported_at: null }).toEqual({ ...before, exported_at: null });
      expect((await after.client.get('/api/instances/7/history')).body.map((h: { field: string }) => h.field)).toEqual(['imported']);
    } finally {
      await after.stop();
    }
  });
});
