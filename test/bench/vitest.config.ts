import { defineConfig } from 'vitest/config';
import { sqlText } from '../../vitest.config.js';

// `npm run bench:features`: the feature benchmarks (heartbeats, events, snapshots, import memory), one file
// at a time, never part of `npm test`. `npm run bench:server` is test/bench/server.bench.mjs, a plain script.
export default defineConfig({
  plugins: [sqlText],
  test: {
    include: ['test/bench/**/*.bench.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    pool: 'forks',
    // --expose-gc: the import benchmark measures memory after a full collection.
    execArgv: ['--expose-gc'],
  },
});
