import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * What a file with no time of its own in vitest's cache is taken to last, by what it starts: real
 * bash agents heartbeat on their intervals (the suite's longest files, 7 to 28 s), Chromium loads
 * pages, a built server starts in its own process; then by its size (a 60 KB file: 3 s more).
 */
const STARTS_MS: [RegExp, number][] = [
  [/helpers\/real-agent|execa\('bash'/, 15_000],
  [/sharedBrowser|startDashboard|playwright-core/, 6_000],
  [/startBuiltServer|startHeadless|dist\/server\/main\.js/, 3_000],
];

function expectedMs(file: string): number {
  const text = fs.readFileSync(file, 'utf8');
  return (STARTS_MS.find(([starts]) => starts.test(text))?.[1] ?? 0) + text.length / 20;
}

/**
 * Failed files first, then the longest, so that a run does not end with one long file alone on a
 * core. vitest's own order is that when its cache (node_modules/.vite) holds the last run's times;
 * a clean clone (CI, a newcomer's first `npm test`) has none, and vitest then runs the largest file
 * first: the 32 s hosts-proxmox file started 39th, the 12 s docs-campaign file 97th. A file the
 * cache does not know (new, or every file in a clean clone) gets its expectedMs.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const cache = this.ctx.cache;
    const known = (file: TestSpecification) => cache.getFileTestResults(`${file.project.name}:${path.relative(this.ctx.config.root, file.moduleId)}`);
    const order = new Map(files.map((file) => {
      const results = known(file);
      return [file, { failed: results?.failed ?? false, ms: results?.duration ?? expectedMs(file.moduleId) }];
    }));
    return [...files].sort((a, b) => {
      const [x, y] = [order.get(a)!, order.get(b)!];
      return Number(y.failed) - Number(x.failed) || y.ms - x.ms;
    });
  }
}
