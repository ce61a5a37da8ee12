import { execa } from 'execa';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { chromiumChoice, unpackNpmChromium } from '../../build/chromium.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** True when the global setup built dist/ for this run: test files then use that build. */
    homefleetBuilt: boolean;
  }
}

const root = path.resolve(import.meta.dirname, '../..');

/**
 * Once per `vitest run`, before any test file: build dist/ (the server bundle that the headless,
 * recover and reporter tests start, and the renderer the browser tests load), and unpack the npm
 * Chromium when that is the one in use. Test files share this build instead of each building (and
 * overwriting dist/ under one another's feet).
 */
export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  // Every temp folder of the run (test files', agents', Chromium's profiles) goes into one folder of
  // its own, removed when the run ends: test files that stop early, and the agents' own mktemp,
  // otherwise leave them in /tmp. `npm test` makes it once for vitest and bats (build/test.mjs).
  let removeRunTmp: (() => void) | undefined;
  if (!process.env.HOMEFLEET_RUN_TMP) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'homefleet-run-'));
    process.env.HOMEFLEET_RUN_TMP = process.env.TMPDIR = tmp;
    removeRunTmp = () => fs.rmSync(tmp, { recursive: true, force: true });
  }
  await Promise.all([
    // `npm test` (build/test.mjs) has just built it, and the bats suite is already using it.
    process.env.HOMEFLEET_DIST_BUILT === '1' ? undefined : execa(process.execPath, ['build/build.mjs'], { cwd: root }),
    chromiumChoice() === 'npm' ? unpackNpmChromium() : undefined,
  ]);
  project.provide('homefleetBuilt', true);
  return removeRunTmp;
}
