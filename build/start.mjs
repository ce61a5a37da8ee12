#!/usr/bin/env node
// `npm start`, `npm run recover` and `npm run restore`: builds what is missing or stale, then runs the server (or the
// recovery command) in this same process, so a signal sent to this process reaches the server.
//
// npm runs a script through `sh -c`, and Debian's dash does not exec the command: a SIGTERM to npm
// kills the shell and leaves its child running, re-parented. So this process also watches its
// parent: when the parent is gone (npm, or the shell between, was stopped) it stops the server as
// SIGTERM would. Ctrl-C reaches every process of the terminal's group directly.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
const parent = process.ppid;
setInterval(() => {
  if (process.ppid === parent) return;
  // The server's own SIGTERM handler closes it cleanly; before it runs, or for recover, just leave.
  if (started && which === 'server' && process.listenerCount('SIGTERM') > 0) process.emit('SIGTERM', 'SIGTERM');
  else process.exit(143);
}, 500).unref();

const { build } = await import('./build.mjs');
await build({ onlyIfStale: true });
started = true;
await import(pathToFileURL(path.join(root, entry)).href);
