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
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
