/**
 * Agent versions for the rollback offer. The server decides "upgrade available" itself; a rollback
 * has to be picked in the page from the manifest's list, so the page orders versions the way
 * server/hosts/releases.ts does (versions.test.ts holds the two to the same answers).
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core = '', pre] = v.split(/[-+]/, 2);
    return { nums: core.split('.').map(Number), pre: v.includes('-') ? (pre ?? '') : undefined };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if ((x.nums[i] ?? 0) !== (y.nums[i] ?? 0)) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** The shipped versions older than `running`, newest first: what a host may be rolled back to. */
export function rollbackTargets(shipped: readonly string[], running: string): string[] {
  return [...new Set(shipped)].filter((v) => compareVersions(v, running) < 0).sort((a, b) => compareVersions(b, a));
}
