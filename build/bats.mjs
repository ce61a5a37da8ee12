#!/usr/bin/env node
// `npm run test:reporter`: the reporter's bats suite, its .bats files run in parallel, each in a bats
// process of its own (`bats --jobs` would need GNU parallel, which is not an npm package). Each file
// starts its own mock servers on port 0 and works in its own BATS_FILE_TMPDIR, so files do not share
// anything. The output of each file is printed whole, in file order, as TAP; the last line counts.
//
//   node build/bats.mjs [--jobs N] [file.bats ...]     (default: every reporter/test/*.bats, N = 4)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startScriptRunner } from './bats-scripts.mjs';

const root = path.resolve(import.meta.dirname, '..');
const bats = path.join(root, 'node_modules', 'bats', 'bin', 'bats');

const args = process.argv.slice(2);
let jobs = Number(process.env.HOMEFLEET_BATS_JOBS) || 4;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--jobs') jobs = Number(args[++i]);
  else files.push(path.resolve(args[i]));
}
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error('bats: --jobs needs a whole number of at least 1');
  process.exit(2);
}
if (files.length === 0) {
  const dir = path.join(root, 'reporter', 'test');
  for (const name of fs.readdirSync(dir).sort()) if (name.endsWith('.bats')) files.push(path.join(dir, name));
}

// The longest files start first, by their time in the last run (the largest first when there is
// none), so the run does not end with one long file alone on a core. Output stays in file order.
const timesFile = path.join(root, 'node_modules', '.cache', 'homefleet-bats-times.json');
let lastTimes = {};
try {
  lastTimes = JSON.parse(fs.readFileSync(timesFile, 'utf8'));
} catch {
  // No earlier run on this machine.
}
const rel = (file) => path.relative(root, file);
const expected = (file) => lastTimes[rel(file)] ?? fs.statSync(file).size / 1000;
const order = files.map((_, i) => i).sort((a, b) => expected(files[b]) - expected(files[a]));

const scriptRunner = startScriptRunner(root);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => (scriptRunner.close(), process.exit(128 + os.constants.signals[signal])));

function runFile(file) {
  return new Promise((resolve) => {
    const started = performance.now();
    const env = { ...process.env, HOMEFLEET_BATS_NODE: scriptRunner.socket };
    const child = spawn(bats, ['--tap', file], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ file, code: 1, output: `${output}${error.message}\n`, seconds: 0 }));
    child.on('close', (code) => resolve({ file, code, output, seconds: (performance.now() - started) / 1000 }));
  });
}

const results = new Array(files.length);
let next = 0;
let printed = 0;
let passed = 0;
let failed = 0;
const print = () => {
  while (printed < files.length && results[printed]) {
    const { file, code, output, seconds } = results[printed++];
    const ok = (output.match(/^ok /gm) ?? []).length;
    const notOk = (output.match(/^not ok /gm) ?? []).length;
    // A file that fails outside any test (a setup_file error, a syntax error) counts as one failure.
    const extra = code !== 0 && notOk === 0 ? 1 : 0;
    passed += ok;
    failed += notOk + extra;
    console.log(`# ${path.relative(root, file)} (${seconds.toFixed(1)} s)${code === 0 ? '' : ` exited ${code}`}`);
    process.stdout.write(output.endsWith('\n') || output === '' ? output : `${output}\n`);
  }
};
await Promise.all(
  Array.from({ length: Math.min(jobs, files.length) }, async () => {
    while (next < files.length) {
      const i = order[next++];
      results[i] = await runFile(files[i]);
      print();
    }
  }),
);
for (const { file, seconds } of results) lastTimes[rel(file)] = Number(seconds.toFixed(1));
try {
  fs.mkdirSync(path.dirname(timesFile), { recursive: true });
  fs.writeFileSync(timesFile, `${JSON.stringify(lastTimes, null, 1)}\n`);
} catch {
  // A read-only checkout keeps the default order.
}
scriptRunner.close();
console.log(`bats: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
