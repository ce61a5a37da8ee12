// Which build targets are missing or older than their sources, from file times alone. `npm start`
// asks before every start: loading esbuild only to learn there is nothing to build cost the server
// process ~10 MB of RSS for its life and ~150 ms of start-up.
// CommonJS, as start.cjs that requires it: see the top of start.cjs.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const TEST_FILE = /\.test\.[cm]?[jt]sx?$/;

/** Each target's output, and the files and folders it is built from (build.mjs adds how). */
const OUTPUTS = {
  server: { sources: ['server', 'package.json', 'build/server-main.cjs'], outfile: 'dist/server/main.cjs' },
  electron: { sources: ['electron', 'server', 'package.json'], outfile: 'dist/electron/main.cjs' },
  // The dashboard imports nothing of the server but its contract (build/dependency-cruiser.cjs checks it).
  renderer: { sources: ['renderer', 'server/contract', 'package.json', 'build/renderer.mjs'], outfile: 'dist/renderer/index.html' },
};

/**
 * The newest modification time under `full` (a file or a folder), 0 when it does not exist. Paths are
 * joined by hand: a few hundred path.join calls got V8's optimising compiler going, and paging its
 * code in cost the server that follows in this process 4 MB of RSS.
 */
function newestMtime(full, seen) {
  const stat = fs.statSync(full, { throwIfNoEntry: false });
  return stat?.isDirectory() ? newestInFolder(full, seen) : (stat?.mtimeMs ?? 0);
}

/**
 * newestMtime of a folder. The listing tells folders from files, so only files are stat'ed, and test
 * files not at all: no target is built from them (they were a quarter of the files a start looked at).
 */
function newestInFolder(folder, seen) {
  if (seen.has(folder)) return seen.get(folder);
  let newest = 0;
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const full = `${folder}/${entry.name}`;
    if (entry.isDirectory()) newest = Math.max(newest, newestInFolder(full, seen));
    else if (!TEST_FILE.test(entry.name)) newest = Math.max(newest, newestMtime(full, seen));
  }
  seen.set(folder, newest);
  return newest;
}

/** True when `target.outfile` exists and no source is newer than it; `seen` keeps times across targets that share sources. */
function isFresh(root, target, seen = new Map()) {
  const built = fs.statSync(path.join(root, target.outfile), { throwIfNoEntry: false })?.mtimeMs;
  return built !== undefined && target.sources.every((source) => newestMtime(path.join(root, source), seen) <= built);
}

/** The names of the targets that `node build/build.mjs --if-missing` would build. */
function staleTargets(root) {
  const seen = new Map();
  return Object.entries(OUTPUTS).filter(([, target]) => !isFresh(root, target, seen)).map(([name]) => name);
}

module.exports = { OUTPUTS, isFresh, staleTargets };
