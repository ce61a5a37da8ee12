#!/usr/bin/env node
// `npm start`, `npm run recover` and `npm run restore`: builds what is missing or stale, then runs the server (or the
// recovery command) in this same process, so a signal sent to this process reaches the server.
// Staleness is told from file times (fresh.cjs); only a stale checkout runs the build, in a child
// process, so esbuild is never loaded into the process that goes on to serve.
//
// CommonJS, and the server's loader it requires too (dist/server/main.cjs): started as an ES module,
// Node set up its module loader and an ES facade of each built-in it imported, ~6 ms of a ~80 ms
// start to healthy. The recovery commands are ES modules and are imported.
//
// npm runs a script through `sh -c`, and Debian's dash does not exec the command: a SIGTERM to npm
// kills the shell and leaves its child running, re-parented. So this process also watches its
// parent: when the parent is gone (npm, or the shell between, was stopped) it stops the server as
// SIGTERM would. Ctrl-C reaches every process of the terminal's group directly.
'use strict';
const path = require('node:path');
const { staleTargets } = require('./fresh.cjs');

const root = path.resolve(__dirname, '..');
const ENTRIES = { server: 'dist/server/main.cjs', recover: 'dist/server/recover.js', restore: 'dist/server/restore.js' };
const which = process.argv[2];
const entry = ENTRIES[which];
if (!entry) {
  process.stderr.write(`usage: node build/start.cjs ${Object.keys(ENTRIES).join('|')} [arguments]\n`);
  process.exit(2);
}
// The program reads its own arguments from process.argv.slice(2).
process.argv.splice(2, 1);

let started = false;
let builder;
const parent = process.ppid;
setInterval(() => {
  if (process.ppid === parent) return;
  // The server's own SIGTERM handler closes it cleanly; before it runs, or for recover, just leave.
  if (started && which === 'server' && process.listenerCount('SIGTERM') > 0) process.emit('SIGTERM', 'SIGTERM');
  else {
    builder?.kill();
    process.exit(143);
  }
}, 500).unref();

/** Runs the entry: the server's CommonJS loader is required, the recovery commands (ES modules) imported. */
function run() {
  started = true;
  if (entry.endsWith('.cjs')) require(path.join(root, entry));
  else import(require('node:url').pathToFileURL(path.join(root, entry)).href).catch(fail);
}

function fail(err) {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
}

if (staleTargets(root).length) {
  // Required only here: child_process is not needed to start a built checkout.
  const { spawn } = require('node:child_process');
  builder = spawn(process.execPath, [path.join(root, 'build/build.mjs'), '--if-missing'], { stdio: 'inherit' });
  builder.once('exit', (status, signal) => {
    const code = status ?? (signal ? 1 : 0);
    if (code !== 0) process.exit(code);
    run();
  });
} else {
  run();
}
