import fs from 'node:fs';
import { afterAll, beforeAll } from 'vitest';

// Loaded only when HOMEFLEET_TEST_CPU_LOG names a file (vitest.config.ts): appends one JSON line per
// test file with its wall time and the CPU it cost its worker, children included (the built servers,
// Chromium and the shells a file starts, once they have exited), to find where the suite's time goes.
const log = process.env.HOMEFLEET_TEST_CPU_LOG!;

/** utime + stime + cutime + cstime of this process, in seconds (Linux clock ticks are 1/100 s). */
function cpuSeconds(): number {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
}

// `import`: the CPU of the worker between the previous file's end (or its start) and this file's
// first hook, which is mostly loading this file's modules.
const state = ((globalThis as any).__homefleetCpuLog ??= { last: 0 }) as { last: number };
let start = { cpu: 0, wall: 0, import: 0 };
beforeAll(() => {
  const cpu = cpuSeconds();
  start = { cpu, wall: performance.now(), import: cpu - state.last };
});
afterAll(({}, suite) => {
  const file = 'filepath' in suite ? String(suite.filepath).replace(`${process.cwd()}/`, '') : suite.name;
  const cpu = cpuSeconds();
  state.last = cpu;
  const line = { file, cpu: +(cpu - start.cpu).toFixed(2), import: +start.import.toFixed(2), wall: +((performance.now() - start.wall) / 1000).toFixed(2), pid: process.pid };
  fs.appendFileSync(log, `${JSON.stringify(line)}\n`);
});
