/** A version as agents, their releases and the manifest write it: x.y.z, with an optional pre-release (`-rc.1`) or build (`+b7`) suffix. */
export const VERSION_SOURCE = '(\\d+\\.\\d+\\.\\d+(?:[-+][0-9A-Za-z.-]+)?)';
export const VERSION_PATTERN = new RegExp(`^${VERSION_SOURCE}$`);

/** An agent release channel (PRODUCT.md "Release channels"): a host follows one, `stable` unless set. */
export const AGENT_CHANNELS = ['stable', 'beta'] as const;
export type AgentChannel = (typeof AGENT_CHANNELS)[number];

/** "`beta` when its version has a pre-release part, else `stable`" (`1.2.0-rc.1` is beta, `1.2.0+b7` stable). */
export const channelOf = (version: string): AgentChannel => (version.split('+', 1)[0]!.includes('-') ? 'beta' : 'stable');

/**
 * SemVer 2.0 precedence (semver.org §11), as the agent's `version_lt` (reporter/lib/common.sh) orders
 * them: major, minor and patch as numbers; a pre-release before its release; pre-release identifiers
 * one by one, numeric ones as numbers and below alphanumeric ones, alphanumerics in ASCII order, and
 * a shorter list first when all before are equal; build metadata (`+…`) ignored. The server's
 * "upgrade available" and rollback rule and the dashboard's list of rollback targets use it.
 */
export function compareVersions(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i]! < y.core[i]! ? -1 : 1;
  if (x.pre.length === 0 || y.pre.length === 0) return x.pre.length === y.pre.length ? 0 : x.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const order = compareIdentifiers(x.pre[i]!, y.pre[i]!);
    if (order !== 0) return order;
  }
  return Math.sign(x.pre.length - y.pre.length);
}

const NUMERIC = /^\d+$/;

function parse(version: string): { core: bigint[]; pre: string[] } {
  const withoutBuild = version.split('+', 1)[0]!;
  const dash = withoutBuild.indexOf('-');
  const core = (dash < 0 ? withoutBuild : withoutBuild.slice(0, dash)).split('.');
  return {
    core: [0, 1, 2].map((i) => (NUMERIC.test(core[i] ?? '') ? BigInt(core[i]!) : 0n)),
    pre: dash < 0 ? [] : withoutBuild.slice(dash + 1).split('.'),
  };
}

function compareIdentifiers(a: string, b: string): number {
  const aNumeric = NUMERIC.test(a);
  const bNumeric = NUMERIC.test(b);
  if (aNumeric && bNumeric) return BigInt(a) === BigInt(b) ? 0 : BigInt(a) < BigInt(b) ? -1 : 1;
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
