import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

// `npm run bench:server`: the server benchmarks, one file at a time, never part of `npm test`.
export default mergeConfig(
  base,
  defineConfig({
    test: {
      include: ['test/bench/**/*.bench.ts'],
      exclude: [],
      testTimeout: 600_000,
      fileParallelism: false,
      // --expose-gc: the import benchmark measures memory after a full collection.
      execArgv: ['--expose-gc'],
    },
  }),
);
