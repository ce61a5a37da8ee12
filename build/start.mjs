#!/usr/bin/env node
// `npm start`, `npm run recover` and `npm run restore`: builds what is missing or stale, then runs the server (or the
// recovery command) in this same process, so a signal sent to this process reaches the server.
// Staleness is told from file times (fresh.mjs); only a stale checkout runs the build, in a child
// process, so esbuild is never loaded into the process that goes on to serve.
//
// npm runs a script through `sh -c`, and Debian's dash does not exec the command: a SIGTERM to npm
// kills the shell and leaves its child running, re-parented. So this process also watches its
// parent: when the parent is gone (npm, or the shell between, was stopped) it stops the server as
// SIGTERM would. Ctrl-C reaches every process of the terminal's group directly.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { staleTargets } from './fresh.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ENTRIES = { server: 'dist/server/main.js', recover: 'dist/server/recover.js', restore: 'dist/server/restore.js' };
const which = process.argv[2];
const entry = ENTRIES[which];
if (!entry) {
  process.stderr.write(`usage: node build/start.mjs ${Object.keys(ENTRIES).join('|')} [arguments]\n`);
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

if (staleTargets(root).length) {
  // Loaded only here: child_process (and the net and stream modules it pulls in) cost a fresh start ~3 ms.
  const { spawn } = await import('node:child_process');
  builder = spawn(process.execPath, [path.join(root, 'build/build.mjs'), '--if-missing'], { stdio: 'inherit' });
  const code = await new Promise((resolve) => builder.once('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
  if (code !== 0) process.exit(code);
}
started = true;
await import(pathToFileURL(path.join(root, entry)).href);
