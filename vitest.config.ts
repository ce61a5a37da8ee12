import { defineConfig, type Plugin } from 'vitest/config';

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
    // Only a failing check waits the whole time.
    expect: { poll: { timeout: 5_000 } },
    hookTimeout: 60_000,
    pool: 'forks',
    // Test files share their worker's module cache: re-importing the server's modules for each of a
    // hundred files cost a minute and a half of CPU a run. Every file builds its own app, database and
    // servers, so no state is carried from one file to the next.
    isolate: false,
    // Builds dist/ once per run (and unpacks the npm Chromium when that is the browser in use).
    globalSetup: ['test/setup/global.ts'],
    // HOMEFLEET_TEST_CPU_LOG=file: one line per test file with its wall time and CPU (test/README.md).
    setupFiles: process.env.HOMEFLEET_TEST_CPU_LOG ? ['test/setup/cpu-log.ts'] : [],
    // Two files at a time, beside the type-check and four bats files (build/test.mjs), as CI runs it.
    // Four at a time was 10% faster here (486 to 568 s against 541 to 604 s) but 8-fold oversubscribed
    // 2 cores: each of five runs on 29 November 2026 failed one test that load exposes (a bound on wall
    // time: an agent's start, a health check during a 1,000-instance edit), where two at a time passed
    // every run.
    // Every file uses its own port 0 servers, temp databases and folders.
    maxWorkers: Number(process.env.HOMEFLEET_TEST_WORKERS) || 2,
  },
});
