#!/usr/bin/env node
// Builds homefleet into dist/. `--if-missing` skips any target whose output is newer than its sources,
// so `npm start` builds only what is missing or stale.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { buildRenderer } from './renderer.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const onlyIfStale = process.argv.includes('--if-missing');

/** Each target: what it bundles, where to, and which folders it is built from. */
export const targets = [
  {
    name: 'server',
    sources: ['server', 'package.json'],
    outfile: 'dist/server/main.js',
    options: {
      entryPoints: { main: 'server/main.ts', recover: 'server/access/recover.ts', restore: 'server/backup/restore-cli.ts' },
      outdir: 'dist/server',
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // Dependencies are bundled too: one file loads in a fraction of the time that resolving
      // Express's many small modules takes, which is most of start-up. The native module stays out.
      external: ['better-sqlite3'],
      // Bundled CommonJS dependencies call require(); ESM output has none, so give it one.
      banner: { js: "import { createRequire as __homefleetRequire } from 'node:module'; const require = __homefleetRequire(import.meta.url);" },
      loader: { '.sql': 'text' },
      sourcemap: true,
    },
  },
  {
    // The Electron main process: CommonJS, because Electron loads `main` with require. The server
    // code it bundles is ESM; import.meta does not exist in CommonJS, so its uses are defined from
    // __filename (the bundle sits in dist/electron, beside dist/server, so paths found from it agree).
    name: 'electron',
    sources: ['electron', 'server', 'package.json'],
    outfile: 'dist/electron/main.cjs',
    options: {
      entryPoints: ['electron/main.ts'],
      outfile: 'dist/electron/main.cjs',
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      packages: 'external',
      external: ['electron'],
      loader: { '.sql': 'text' },
      define: {
        'import.meta.url': 'importMetaUrl',
        'import.meta.dirname': '__dirname',
        'import.meta.filename': '__filename',
      },
      inject: ['build/cjs-import-meta.mjs'],
      sourcemap: true,
    },
  },
  {
    name: 'renderer',
    sources: ['renderer', 'server/access/capabilities.ts', 'package.json', 'build/renderer.mjs'],
    outfile: 'dist/renderer/index.html',
    build: buildRenderer,
    options: {
      entryPoints: { app: 'renderer/main.tsx' },
      outdir: 'dist/renderer/assets',
    },
  },
];

function newestMtime(entry) {
  const full = path.join(root, entry);
  if (!fs.existsSync(full)) return 0;
  const stat = fs.statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const child of fs.readdirSync(full)) newest = Math.max(newest, newestMtime(path.join(entry, child)));
  return newest;
}

function isFresh(target) {
  const out = path.join(root, target.outfile);
  if (!fs.existsSync(out)) return false;
  const built = fs.statSync(out).mtimeMs;
  return target.sources.every((source) => newestMtime(source) <= built);
}

async function buildTarget(target) {
  const started = Date.now();
  const options = { ...target.options, absWorkingDir: root, logLevel: 'warning' };
  // Entries that do not exist yet are left out, so a partial checkout still builds.
  if (options.entryPoints && !Array.isArray(options.entryPoints)) {
    options.entryPoints = Object.fromEntries(
      Object.entries(options.entryPoints).filter(([, file]) => fs.existsSync(path.join(root, file))),
    );
  }
  await (target.build ?? esbuild.build)(options);
  process.stderr.write(`built ${target.name} in ${Date.now() - started} ms\n`);
}

// Run only as a script, so tests can import `targets` without building.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const target of targets) {
    if (onlyIfStale && isFresh(target)) continue;
    await buildTarget(target);
  }
}
