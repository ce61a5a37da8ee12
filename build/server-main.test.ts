import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { killWhenTestEnds } from '../test/helpers/listening.js';

const root = path.resolve(import.meta.dirname, '..');
const built = path.join(root, 'dist/server');
// Inside dist/ so the bundle's bare requires resolve from the repository's node_modules.
const dir = fs.mkdtempSync(path.join(root, 'dist', '.test-server-main-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs main.cjs from `dir` until it prints its listening line; returns what it printed. */
async function firstLines(): Promise<string> {
  const child = execa(process.execPath, [path.join(dir, 'main.cjs')], { env: { PORT: '0', HOST: '127.0.0.1', DB_PATH: ':memory:' }, extendEnv: false, reject: false });
  killWhenTestEnds(child);
  let out = '';
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      if (/ on http:/.test(out)) resolve();
    });
    child.once('exit', () => resolve());
  });
  child.kill('SIGTERM');
  await child;
  return out;
}

describe('dist/server/main.cjs (build/server-main.cjs)', () => {
  it('has the code cache the build made for its bundle', () => {
    const cache = fs.readFileSync(path.join(built, 'server.cjs.cache'));
    expect(cache.length).toBeGreaterThan(100_000);
  });

  it('runs an edited bundle as edited, never the code its old cache holds for the same length of source', async () => {
    for (const file of ['main.cjs', 'server.cjs.cache']) fs.copyFileSync(path.join(built, file), path.join(dir, file));
    const source = fs.readFileSync(path.join(built, 'server.cjs'), 'latin1');
    expect(source).toContain('homefleet listening on');
    // Same length: V8's own check of a cache against its source compares lengths and nothing more.
    fs.writeFileSync(path.join(dir, 'server.cjs'), source.replace('homefleet listening on', 'homefleet LISTENING on'), 'latin1');
    expect(await firstLines()).toContain('homefleet LISTENING on http://127.0.0.1:');
  });
});
