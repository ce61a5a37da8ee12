#!/usr/bin/env node
// `npm test`: build dist/ once, then the type-check, the vitest suite and the reporter's bats suite
// at the same time (they share no port, file or database: vitest and bats servers listen on port 0,
// each test works in its own temp folder, and all of them only read dist/). vitest's output streams;
// the type-check's and bats' are printed whole when each finishes. Exits non-zero when any fails.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const started = performance.now();
const seconds = (from) => ((performance.now() - from) / 1000).toFixed(1);
const strip = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');

// The tests reach only servers they start on loopback, with certificates of their own (a test that
// needs an extra CA sets NODE_EXTRA_CA_CERTS for its server itself). A machine's own, such as the
// system bundle this development machine sets it to, is parsed at every Node start: 30 ms of CPU
// each (47 against 17 ms for `node -e 1`), for the hundreds of node processes a run starts.
const { NODE_EXTRA_CA_CERTS: _machineCa, ...baseEnv } = process.env;

function run(name, command, args, { stream = false, env = {}, nice = 0 } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(command, args, { cwd: root, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    // Set before the child has started anything of its own, so what it starts inherits the priority.
    if (nice && child.pid) {
      try {
        os.setPriority(child.pid, nice);
      } catch {
        // A platform without priorities: the step runs at the usual one.
      }
    }
    let output = '';
    const take = (target) => (chunk) => {
      output += chunk;
      if (stream) target.write(chunk);
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    child.on('error', (error) => resolve({ name, code: 1, output: `${output}${error.message}\n`, time: seconds(t0) }));
    child.on('close', (code) => {
      const result = { name, code: code ?? 1, output, time: seconds(t0) };
      if (!stream) process.stdout.write(`\n── ${name} (${result.time} s) ──\n${output}`);
      resolve(result);
    });
  });
}

// One temp folder for the whole run (TMPDIR of vitest, bats and all they start), removed at the end.
const runTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-run-'));
const runEnv = { TMPDIR: runTmp, HOMEFLEET_RUN_TMP: runTmp };
const node = process.execPath;
// vitest is the longest step (its files wait on agents, browsers and timers); the type-check and bats
// run at a lower priority (nice 10) and take the cores whenever vitest leaves them idle. On 2 cores
// that took a run from 541–604 s to 515 s (29 November 2026): bats ends later, vitest sooner.
// HOMEFLEET_TEST_NICE=0 runs all three alike.
const NICE = Number(process.env.HOMEFLEET_TEST_NICE ?? 10);
const build = await run('build', node, ['build/build.mjs']);
if (build.code !== 0) process.exit(build.code);

// The global setup of vitest skips its own build: dist/ was just built from the current sources.
const results = await Promise.all([
  // One thread: its four checkers each re-check what the files share, 19 CPU-seconds against 9 for
  // the same answer, on cores that vitest and bats are using meanwhile.
  run('typecheck', node, ['node_modules/typescript7/bin/tsc', '--noEmit', '--singleThreaded'], { nice: NICE }),
  run('vitest', node, ['node_modules/vitest/vitest.mjs', 'run'], { stream: true, env: { HOMEFLEET_DIST_BUILT: '1', ...runEnv } }),
  run('bats', node, ['build/bats.mjs'], { env: runEnv, nice: NICE }),
]);

fs.rmSync(runTmp, { recursive: true, force: true });

let passed = 0;
let failed = 0;
const vitest = strip(results[1].output).match(/^\s*Tests\s+(.*)$/m)?.[1] ?? '';
passed += Number(vitest.match(/(\d+) passed/)?.[1] ?? 0);
failed += Number(vitest.match(/(\d+) failed/)?.[1] ?? 0);
const bats = results[2].output.match(/^bats: (\d+) passed, (\d+) failed$/m);
passed += Number(bats?.[1] ?? 0);
failed += Number(bats?.[2] ?? 0);
const broken = results.filter((r) => r.code !== 0);
// A step that failed without a failing test (a type error, a crash) still counts as a failure.
if (broken.length > 0 && failed === 0) failed = broken.length;

console.log(`\n${results.map((r) => `${r.name} ${r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`} in ${r.time} s`).join('; ')}; total ${seconds(started)} s`);
console.log(`test: ${passed} passed, ${failed} failed`);
process.exit(broken.length > 0 ? 1 : 0);
