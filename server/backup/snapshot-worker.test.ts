import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { targets } from '../../build/build.mjs';
import { ensureBuilt } from '../../test/helpers/build.js';
import { startBuiltServer } from '../../test/helpers/built-server.js';
import { TestClient } from '../../test/helpers/http.js';
import { logIn } from '../../test/helpers/server.js';
import { removeTempDbs, tempDbPath } from '../../test/helpers/tempdb.js';
import { createApp } from '../app.js';
import { openDatabase, openRetained } from '../db/database.js';
import { createLogger } from '../logger.js';
import { createCopier, snapshotWorkerFile } from './snapshot-copier.js';
import type { WorkerMessage } from './snapshot-worker.js';

const root = path.resolve(import.meta.dirname, '../..');
beforeAll(() => ensureBuilt(), 120_000);
afterAll(() => removeTempDbs());

function databaseWith(name: string): string {
  const file = tempDbPath();
  const db = openDatabase(file);
  db.prepare("INSERT INTO instances (vmid, name, state, stack, created_at, updated_at) VALUES (7, ?, 'deployed', 'development', 'x', 'x')").run(name);
  db.close();
  return file;
}

/** Runs a built helper as snapshot-copier.ts does; resolves with what it said and how it ended. */
function runWorker(file: string, source: string, dest: string): Promise<{ messages: WorkerMessage[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const messages: WorkerMessage[] = [];
    const child = fork(file, [source, dest], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } });
    child.on('message', (m: WorkerMessage) => messages.push(m));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ messages, code }));
  });
}

const nameIn = (file: string) => {
  const db = openRetained(file, { readonly: true });
  try {
    return [db.prepare('SELECT name FROM instances').pluck().get(), db.prepare('PRAGMA journal_mode').pluck().get()];
  } finally {
    db.close();
  }
};

describe('the snapshot helper, as built', () => {
  const electronWorker = targets.find((t) => t.name === 'electron-snapshot-worker')!;
  const builds = [
    ['the server bundle', 'dist/server/snapshot-worker.js'],
    ['the desktop app (CommonJS, as Electron runs it as Node)', electronWorker.outfile],
  ] as const;

  it.each(builds)('%s: copies, says so, then checks a self-contained copy', async (_what, worker) => {
    const source = databaseWith('copied');
    const dest = path.join(path.dirname(source), 'copy.db');
    const result = await runWorker(path.join(root, worker), source, dest);
    expect(result).toEqual({ messages: [{ stage: 'copied' }, { stage: 'checked' }], code: 0 });
    expect(nameIn(dest)).toEqual(['copied', 'delete']);
  });

  it.each(builds)('%s: a source that cannot be read fails with the reason', async (_what, worker) => {
    const dir = path.dirname(tempDbPath());
    const result = await runWorker(path.join(root, worker), path.join(dir, 'missing.db'), path.join(dir, 'copy.db'));
    expect(result.messages).toEqual([{ stage: 'failed', detail: expect.stringMatching(/missing\.db|unable to open|does not exist/) }]);
  });

  it('sits beside the bundle that starts it: the desktop app\'s main bundle, and the server\'s', () => {
    const electron = targets.find((t) => t.name === 'electron')!;
    expect(path.dirname(electronWorker.outfile)).toBe(path.dirname(electron.outfile));
    const server = targets.find((t) => t.name === 'server')!;
    expect(server.options.entryPoints['snapshot-worker']).toBe('server/backup/snapshot-worker.ts');
    expect(path.dirname(server.outfile)).toBe('dist/server');
    // Run from the sources (the tests), the server takes the built one.
    expect(snapshotWorkerFile()).toBe(path.join(root, 'dist/server/snapshot-worker.js'));
  });

  it('is found by the desktop app\'s main bundle beside itself', async () => {
    const out = fs.mkdtempSync(path.join(root, 'dist', '.test-snapshot-worker-'));
    try {
      const probe = path.join(out, 'probe.ts');
      fs.writeFileSync(probe, `import { snapshotWorkerFile } from ${JSON.stringify(path.join(root, 'server/backup/snapshot-copier.ts'))};\nconsole.log(String(snapshotWorkerFile()));\n`);
      const bundle = path.join(out, 'electron', 'main.cjs');
      const electron = targets.find((t) => t.name === 'electron')!;
      await esbuild.build({ ...electron.options, entryPoints: [probe], outfile: bundle, absWorkingDir: root, logLevel: 'silent', sourcemap: false });
      fs.writeFileSync(path.join(out, 'electron', 'snapshot-worker.cjs'), '');
      expect((await execa(process.execPath, [bundle])).stdout).toBe(path.join(out, 'electron', 'snapshot-worker.cjs'));
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('the copier', () => {
  function capture() {
    const lines: string[] = [];
    const logger = createLogger('info');
    logger.warn = ((obj: unknown, msg: string) => void lines.push(`${msg} ${JSON.stringify(obj)}`)) as typeof logger.warn;
    return { logger, lines };
  }

  it('copies through the helper, and without one copies on the server itself, saying why once', async () => {
    const source = databaseWith('live');
    const db = openRetained(source);
    const { logger, lines } = capture();
    const withHelper = createCopier({ db, logger }, process.execPath);
    const first = path.join(path.dirname(source), 'first.db');
    await withHelper.copy(source, first, 'nothing').checked;
    expect(lines).toEqual([]);

    const without = createCopier({ db, logger }, process.execPath, path.join(path.dirname(source), 'no-such-worker.js'));
    for (const name of ['second.db', 'third.db']) {
      const dest = path.join(path.dirname(source), name);
      await without.copy(source, dest, 'nothing').checked;
      expect(nameIn(dest)).toEqual(['live', 'delete']);
    }
    expect(lines).toEqual([expect.stringContaining('the snapshot helper cannot run: snapshots are copied by the server itself')]);
    db.close();
  });
});

describe('the built server', () => {
  it('takes its snapshots in the helper', { timeout: 60_000 }, async () => {
    const dbPath = tempDbPath();
    const app = createApp({ dbPath, config: { snapshotIntervalHours: 0 } });
    await app.accounts.create({ username: 'admin', display_name: 'Admin', role: 'administrator', password: 'worker-test-password' });
    await app.close();
    const server = await startBuiltServer({ DB_PATH: dbPath, FLEET_AUTH_ALLOW_HTTP: 'true', FLEET_SNAPSHOT_INTERVAL_HOURS: '0' });
    try {
      const client = await logIn(new TestClient(server.url), 'admin', 'worker-test-password');
      expect((await client.post('/api/snapshots')).status).toBe(201);
    } finally {
      const { all } = await server.stop();
      expect(all).toContain('database snapshot taken');
      expect(all).not.toContain('snapshot helper');
    }
    expect(fs.readdirSync(path.join(path.dirname(dbPath), 'snapshots'))).toHaveLength(1);
  });
});

describe('the helper runs at the priority of what someone waits for', () => {
  it('a scheduled snapshot at the lowest; a person’s “take one now” at normal priority, check included; an import’s check at the lowest', async () => {
    const dir = path.dirname(tempDbPath());
    // Speaks the helper's protocol and writes down what it was started with and at which priority.
    const fake = path.join(dir, 'recording-helper.cjs');
    fs.writeFileSync(
      fake,
      `const os = require('node:os'); const fs = require('node:fs');
       const [, , source, dest, option] = process.argv;
       fs.copyFileSync(source, dest);
       fs.writeFileSync(dest + '.seen', JSON.stringify({ option: option ?? null, priority: os.getPriority() }));
       process.send({ stage: 'copied' }); process.send({ stage: 'checked' }, () => process.disconnect());`,
    );
    const source = databaseWith('live');
    const db = openRetained(source);
    const copier = createCopier({ db, logger: createLogger('silent') }, process.execPath, fake);
    const seen: Record<string, unknown> = {};
    for (const waits of ['nothing', 'check', 'copy'] as const) {
      const dest = path.join(dir, `${waits}.db`);
      await copier.copy(source, dest, waits).checked;
      seen[waits] = JSON.parse(fs.readFileSync(`${dest}.seen`, 'utf8'));
    }
    db.close();
    const ours = os.getPriority(); // the helper starts at the server's priority (0 unless the suite itself runs niced)
    expect(seen).toEqual({
      nothing: { option: null, priority: 19 },
      check: { option: null, priority: ours },
      copy: { option: '--check-at-low-priority', priority: ours },
    });
  });
});
