import { channelOf, compareVersions, type AgentChannel } from '../../../server/contract/versions';

/**
 * The shipped versions older than `running`, newest first: what a host may be rolled back to. The
 * server decides "upgrade available" itself; a rollback has to be picked in the page from the
 * manifest's list, ordered by the server's own rule (server/contract/versions.ts).
 */
export function rollbackTargets(shipped: readonly string[], running: string): string[] {
  return [...new Set(shipped)].filter((v) => compareVersions(v, running) < 0).sort((a, b) => compareVersions(b, a));
}

/**
 * The shipped versions a host on `channel` may be pinned to or moved to, newest first: the stable
 * ones for `stable`, every one for `beta` (the server refuses a pre-release to a stable host).
 */
export function channelVersions(shipped: readonly string[], channel: AgentChannel): string[] {
  return [...new Set(shipped)].filter((v) => channel === 'beta' || channelOf(v) === 'stable').sort((a, b) => compareVersions(b, a));
}
