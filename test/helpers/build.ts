import { execa } from 'execa';
import path from 'node:path';
import { inject } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
let built: Promise<unknown> | undefined;

/**
 * dist/ as built from the current sources: the vitest global setup (test/setup/global.ts) builds it
 * once per run; a run without that setup (the benchmarks' config) builds it here, once per file.
 */
export function ensureBuilt(): Promise<unknown> {
  built ??= inject('homefleetBuilt') ? Promise.resolve() : execa(process.execPath, ['build/build.mjs'], { cwd: root });
  return built;
}
