import { defineConfig, type Plugin } from 'vitest/config';
import LongestFirst from './test/setup/sequencer.js';

/**
 * Migrations are .sql files imported as text: esbuild's `text` loader in the build, this transform
 * under vitest, so tests run the exact SQL that ships.
 */
export const sqlText: Plugin = {
  name: 'homefleet-sql-text',
  transform(code, id) {
    if (!id.endsWith('.sql')) return null;
    return { code: `export default ${JSON.stringify(code)};`, map: null };
  },
};

export default defineConfig({
  plugins: [sqlText],
  test: {
    include: ['server/**/*.test.ts', 'electron/**/*.test.ts', 'renderer/**/*.test.ts', 'build/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**', 'dist/**'],
    testTimeout: 20_000,
    // expect.poll waits this long for a condition (vitest's default is 1 s): pages other than the first
    // are chunks fetched when they open, and four files with browsers on two cores make that slower.
    // Only a failing check waits the whole time. It looks every 100 ms (vitest's default is 50): a
    // look at a page is a round trip through Chromium, and half as many cost less CPU beside the rest.
    expect: { poll: { timeout: 5_000, interval: 100 } },
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files share their worker's module cache: re-importing the server's modules for each of a
    // hundred files cost a minute and a half of CPU a run. Every file builds its own app, database and
    // servers, so no state is carried from one file to the next.
    isolate: false,
    // Builds dist/ once per run (and unpacks the npm Chromium when that is the browser in use).
    globalSetup: ['test/setup/global.ts'],
    // The longest files first, also in a clean clone, whose vitest has no times cached (test/setup/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    // HOMEFLEET_TEST_CPU_LOG=file: one line per test file with its wall time and CPU (test/README.md).
    setupFiles: process.env.HOMEFLEET_TEST_CPU_LOG ? ['test/setup/cpu-log.ts'] : [],
    // Three files at a time, beside the type-check and four bats files (build/test.mjs), as CI runs it.
    // Their waits on agents, browsers and timers leave a core idle at two: on 29 November 2026 (quiet
    // 2-core machine) two took 210 to 214 s and three 178 to 185 s, CPU-bound (345 to 363 CPU-s). Four
    // at a time failed a bound on wall time in each of five runs on the slower machine of the earlier
    // record; at three, two tests that load exposed were fixed (test/README.md).
    // Every file uses its own port 0 servers, temp databases and folders.
    maxWorkers: Number(process.env.HOMEFLEET_TEST_WORKERS) || 3,
  },
});
