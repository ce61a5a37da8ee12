#!/usr/bin/env node
// `npm test`: build dist/ once, then the type-check, the vitest suite and the reporter's bats suite
// at the same time (they share no port, file or database: vitest and bats servers listen on port 0,
// each test works in its own temp folder, and all of them only read dist/). vitest's output streams;
// the type-check's and bats' are printed whole when each finishes. Exits non-zero when any fails.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromiumChoice, unpackNpmChromium } from './chromium.mjs';

const root = path.resolve(import.meta.dirname, '..');
const started = performance.now();
const seconds = (from) => ((performance.now() - from) / 1000).toFixed(1);
const strip = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');

// The tests reach only servers they start on loopback, with certificates of their own (a test that
// needs an extra CA sets NODE_EXTRA_CA_CERTS for its server itself). A machine's own, such as the
// system bundle this development machine sets it to, is parsed at every Node start: 30 ms of CPU
// each (47 against 17 ms for `node -e 1`), for the hundreds of node processes a run starts.
const { NODE_EXTRA_CA_CERTS: _machineCa, ...baseEnv } = process.env;

const SHM = '/dev/shm';
/** What a run may take of the RAM disk: its databases, agents' roots and the 200 MiB file's copies peak at about 1 GiB. */
const SHM_NEEDED = 4 * 2 ** 30;

/**
 * Where the run's temp folder goes: the RAM disk /dev/shm when the machine has one with room and
 * lets programs run from it (the tests run agents and fake hypervisor tools from their temp
 * folders), else os.tmpdir(); HOMEFLEET_TEST_SHM=0 keeps it there. The suite writes thousands of
 * databases, agent roots and files: on this machine's ext4 their journaling took 30 of 340 CPU-seconds
 * of a run, and the run 16 s longer (29 November 2026: 342 against 375 and 310 against 341 CPU-s).
 * A folder an earlier run left there (it was killed) is removed: on a RAM disk it holds memory.
 */
function runTmpBase() {
  if (process.env.HOMEFLEET_TEST_SHM === '0') return os.tmpdir();
  try {
    const { bavail, bsize } = fs.statfsSync(SHM);
    if (bavail * bsize < SHM_NEEDED) return os.tmpdir();
    for (const name of fs.readdirSync(SHM)) {
      const pid = Number(/^homefleet-run-(\d+)-/.exec(name)?.[1]);
      if (pid && !running(pid)) fs.rmSync(path.join(SHM, name), { recursive: true, force: true });
    }
    const probe = fs.mkdtempSync(path.join(SHM, `homefleet-run-${process.pid}-probe-`));
    try {
      const program = path.join(probe, 'probe');
      fs.writeFileSync(program, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      if (spawnSync(program).status !== 0) return os.tmpdir();
    } finally {
      fs.rmSync(probe, { recursive: true, force: true });
    }
    return SHM;
  } catch {
    return os.tmpdir();
  }
}

function running(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function run(name, command, args, { stream = false, env = {}, nice = 0 } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(command, args, { cwd: root, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
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
      children.delete(child);
      const result = { name, code: code ?? 1, output, time: seconds(t0) };
      if (!stream) process.stdout.write(`\n── ${name} (${result.time} s) ──\n${output}`);
      resolve(result);
    });
  });
}

// One temp folder for the whole run (TMPDIR of vitest, bats and all they start), removed at the end.
const runTmp = fs.mkdtempSync(path.join(runTmpBase(), `homefleet-run-${process.pid}-`));
const runEnv = { TMPDIR: runTmp, HOMEFLEET_RUN_TMP: runTmp };
// Stopped (Ctrl-C, a SIGTERM): the steps are stopped too, and the temp folder still goes once they have.
const children = new Set();
let stoppedBy;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stoppedBy ??= signal;
    for (const child of children) child.kill('SIGTERM');
    if (children.size === 0) leave();
  });
}
function leave(code = 1) {
  if (stoppedBy) endLeftovers();
  fs.rmSync(runTmp, { recursive: true, force: true });
  process.exit(stoppedBy ? 128 + os.constants.signals[stoppedBy] : code);
}
/**
 * Ends what the stopped steps left running: a built server or an agent a test had started, when its
 * worker was killed before the test's own stop. Each has the run's temp folder in its environment.
 */
function endLeftovers() {
  let entries = [];
  try {
    entries = fs.readdirSync('/proc', { withFileTypes: true });
  } catch {
    return; // no /proc here
  }
  for (const entry of entries) {
    const pid = Number(entry.name);
    if (!pid || pid === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`, 'latin1').includes(runTmp)) process.kill(pid, 'SIGKILL');
    } catch {
      // gone, or not ours to read
    }
  }
}
const node = process.execPath;
// vitest is the longest step (its files wait on agents, browsers and timers); the type-check and bats
// run at a lower priority (nice 10) and take the cores whenever vitest leaves them idle. On 2 cores
// that took a run from 541–604 s to 515 s (29 November 2026): bats ends later, vitest sooner.
// HOMEFLEET_TEST_NICE=0 runs all three alike.
const NICE = Number(process.env.HOMEFLEET_TEST_NICE ?? 10);
// The npm Chromium is unpacked (2 s, on a clean clone) while dist/ builds, not by vitest's global
// setup afterwards, when every vitest worker waits for it (which tries again, and says why, if this fails).
const unpacked = chromiumChoice() === 'npm' ? unpackNpmChromium().catch(() => undefined) : undefined;
const [build] = await Promise.all([run('build', node, ['build/build.mjs']), unpacked]);
if (build.code !== 0 || stoppedBy) leave(build.code);

// The global setup of vitest skips its own build: dist/ was just built from the current sources.
const results = await Promise.all([
  // One thread: its four checkers each re-check what the files share, 19 CPU-seconds against 9 for
  // the same answer, on cores that vitest and bats are using meanwhile.
  run('typecheck', node, ['node_modules/typescript7/bin/tsc', '--noEmit', '--singleThreaded'], { nice: NICE }),
  run('vitest', node, ['node_modules/vitest/vitest.mjs', 'run'], { stream: true, env: { HOMEFLEET_DIST_BUILT: '1', ...runEnv } }),
  run('bats', node, ['build/bats.mjs'], { env: runEnv, nice: NICE }),
]);

if (stoppedBy) leave();
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
