/**
 * Numeric x.y.z comparison (a pre-release suffix sorts before its release): the server's "upgrade
 * available" and rollback rule, and the dashboard's list of rollback targets, order versions alike.
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
