import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { listeningUrl } from '../test/helpers/listening.js';
import { staleTargets } from './fresh.cjs';

const root = path.resolve(import.meta.dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-start-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const HOUR = 3600_000;
/** Writes `file` under `base` with its modification time `age` ms in the past. */
function put(base: string, file: string, text: string, age: number) {
  const full = path.join(base, file);
  fs.mkdirSync(path.dirname(full), { recursive: true });
  fs.writeFileSync(full, text);
  const at = new Date(Date.now() - age);
  fs.utimesSync(full, at, at);
}

/** A checkout in miniature: sources an hour old, every output built after them. */
function checkout(name: string) {
  const base = path.join(dir, name);
  put(base, 'package.json', '{ "type": "module" }', 2 * HOUR);
  for (const source of ['server/main.ts', 'server/contract/access.ts', 'electron/main.ts', 'renderer/main.tsx', 'build/renderer.mjs']) put(base, source, '', 2 * HOUR);
  for (const output of ['dist/server/main.cjs', 'dist/electron/main.cjs', 'dist/renderer/index.html']) put(base, output, '', HOUR);
  return base;
}

describe('staleTargets (file times only, no esbuild)', () => {
  it('finds nothing to build when every output is newer than its sources', () => {
    expect(staleTargets(checkout('fresh'))).toEqual([]);
  });

  it('names the targets a newer source file belongs to, however deep it sits', () => {
    const base = checkout('edited');
    put(base, 'server/registry/deep/repo.ts', '', 0);
    expect(staleTargets(base)).toEqual(['server', 'electron']);
    put(base, 'package.json', '{ "type": "module" }', 0);
    expect(staleTargets(base)).toEqual(['server', 'electron', 'renderer']);
  });

  it('rebuilds the dashboard when the wire contract it imports changes, and for no other server file', () => {
    const base = checkout('contract');
    put(base, 'server/access/routes.ts', '', 0);
    expect(staleTargets(base)).toEqual(['server', 'electron']);
    put(base, 'server/contract/registry.ts', '', 0);
    expect(staleTargets(base)).toEqual(['server', 'electron', 'renderer']);
  });

  it('does not rebuild for a test file, which no target is built from', () => {
    const base = checkout('test-file');
    put(base, 'server/registry/repo.test.ts', '', 0);
    put(base, 'renderer/pages/Hosts.test.tsx', '', 0);
    expect(staleTargets(base)).toEqual([]);
  });

  it('names a target whose output is missing', () => {
    const base = checkout('missing');
    fs.rmSync(path.join(base, 'dist/renderer/index.html'));
    expect(staleTargets(base)).toEqual(['renderer']);
  });
});

describe('build/start.cjs', () => {
  /** A miniature checkout with the real start.cjs and fresh.cjs, a build that records its process, and a "server" that does too. */
  function withStart(name: string, build: string) {
    const base = checkout(name);
    for (const file of ['start.cjs', 'fresh.cjs']) fs.copyFileSync(path.join(root, 'build', file), path.join(base, 'build', file));
    put(base, 'build/build.mjs', `import fs from 'node:fs';\nfs.writeFileSync(${JSON.stringify(path.join(base, 'build.json'))}, JSON.stringify({ pid: process.pid, args: process.argv.slice(2) }));\n${build}`, 2 * HOUR);
    put(base, 'dist/server/main.cjs', `const fs = require('node:fs');\nfs.writeFileSync(${JSON.stringify(path.join(base, 'server.json'))}, JSON.stringify({ pid: process.pid, args: process.argv.slice(2) }));\n`, HOUR);
    const read = (file: string) => (fs.existsSync(path.join(base, file)) ? JSON.parse(fs.readFileSync(path.join(base, file), 'utf8')) : undefined);
    return { base, start: () => execa(process.execPath, [path.join(base, 'build/start.cjs'), 'server', '--flag'], { reject: false }), read };
  }

  it('runs a fresh build\'s server at once, in its own process, with the arguments after the command', async () => {
    const { start, read } = withStart('start-fresh', '');
    const child = start();
    expect((await child).exitCode).toBe(0);
    expect(read('build.json')).toBeUndefined();
    expect(read('server.json')).toEqual({ pid: child.pid, args: ['--flag'] });
  });

  it('builds a stale checkout in a child process (build.mjs --if-missing), then runs the server in its own', async () => {
    const { base, start, read } = withStart('start-stale', '');
    put(base, 'server/main.ts', 'changed', 0);
    const child = start();
    expect((await child).exitCode).toBe(0);
    expect(read('build.json')).toEqual({ pid: expect.any(Number), args: ['--if-missing'] });
    expect(read('build.json').pid).not.toBe(child.pid);
    expect(read('server.json')).toEqual({ pid: child.pid, args: ['--flag'] });
  });

  it('does not start the server when the build fails, and exits with its status', async () => {
    const { base, start, read } = withStart('start-broken', 'process.exit(3);');
    put(base, 'server/main.ts', 'changed', 0);
    expect((await start()).exitCode).toBe(3);
    expect(read('server.json')).toBeUndefined();
  });

  it('never loads esbuild into the process that serves (the real checkout, built)', async () => {
    // Every module the process resolves is written down: what it imports by a loader hook, what it
    // requires by a wrapper of CommonJS's resolver. To a file, synchronously: the hooks run on a thread
    // of their own, whose stderr reaches the process's only through the main thread, and on a loaded
    // machine lines still on their way were lost when the server stopped.
    const log = path.join(dir, 'resolved.log');
    fs.writeFileSync(
      path.join(dir, 'hooks.mjs'),
      `import fs from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); fs.appendFileSync(${JSON.stringify(log)}, \`resolved \${r.url}\\n\`); return r; }\n`,
    );
    fs.writeFileSync(path.join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(new URL(`file://${path.join(dir, 'hooks.mjs')}`).href)});\n`);
    fs.writeFileSync(
      path.join(dir, 'requires.cjs'),
      `const fs = require('node:fs');\nconst Module = require('node:module');\nconst resolve = Module._resolveFilename;\nModule._resolveFilename = function (...args) { const r = resolve.apply(this, args); fs.appendFileSync(${JSON.stringify(log)}, \`resolved file://\${r}\\n\`); return r; };\n`,
    );
    const child = execa(process.execPath, ['--import', path.join(dir, 'register.mjs'), '--require', path.join(dir, 'requires.cjs'), 'build/start.cjs', 'server'], {
      cwd: root,
      env: { PORT: '0', HOST: '127.0.0.1', DB_PATH: path.join(dir, 'start.db'), LOG_LEVEL: 'info' },
      reject: false,
    });
    await listeningUrl(child);
    child.kill('SIGTERM');
    await child;
    const resolved = fs.readFileSync(log, 'utf8').split('\n').filter((line) => line.startsWith('resolved '));
    expect(resolved, resolved.join('\n')).toContain(`resolved file://${root}/dist/server/main.cjs`);
    expect(resolved.filter((line) => /esbuild|build\/build\.mjs/.test(line))).toEqual([]);
  });
});
