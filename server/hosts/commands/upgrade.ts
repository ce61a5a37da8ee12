import type { UpgradeCommand } from '../../contract/hosts.js';
import { badRequest, conflict } from '../../errors.js';
import { announceStatus, requireHost, type HostParts, type Who } from '../parts.js';
import type { Releases } from '../releases.js';
import { offeredUpgrade, requestedUpgrade, settledUpgrade, timedOutUpgrade, UPGRADE_TIMEOUT_MS } from '../upgrades.js';
import { commandKind } from './types.js';

type Offer = NonNullable<ReturnType<typeof offeredUpgrade>>;

/**
 * An agent upgrade (the states are in server/hosts/upgrades.ts): asked for by an administrator,
 * offered once in a heartbeat answer, settled by a later heartbeat or by the sweep when it times out.
 * A host being removed gets no upgrade and settles none.
 */
export const upgrade = commandKind<UpgradeCommand, Offer>({
  settle({ repo, audit, host, now }) {
    const settled = host.state === 'active' ? settledUpgrade(host, now) : undefined;
    if (!settled) return;
    repo.setUpgrade(host.id, settled);
    audit.write({
      actor: `agent:${host.hostname}`,
      ip: null,
      action: `host.upgrade_${settled.state}`,
      target: `host:${host.id}`,
      detail: { version: host.upgrade_version, from: host.upgrade_from },
    });
  },

  due({ host, now }) {
    const offer = host.state === 'active' ? offeredUpgrade(host, now) : undefined;
    return offer ? [offer] : [];
  },
  deliver({ repo, host }, offer) {
    repo.setUpgrade(host.id, offer.record);
    return offer;
  },
  render: ({ version, rollback }) => ({ type: 'upgrade', version, ...(rollback ? { rollback: true as const } : {}) }),

  sweep(parts, now) {
    const { ctx, repo, audit } = parts;
    const fail = ctx.transaction((hostId: number) => {
      const host = repo.hostById(hostId);
      const failed = host && timedOutUpgrade(host);
      if (!failed) return;
      repo.setUpgrade(host.id, failed);
      audit.write({
        actor: null,
        ip: null,
        action: 'host.upgrade_failed',
        target: `host:${host.id}`,
        detail: { host: host.hostname, version: host.upgrade_version, from: host.upgrade_from, reason: 'no heartbeat from the new version within 5 minutes' },
      });
      announceStatus(parts, host.id);
    });
    for (const stale of repo.upgradesTimedOut(now - UPGRADE_TIMEOUT_MS)) fail(stale.id);
  },
});

/** POST /api/hosts/:id/upgrade: no version means the shipped one; an older one needs `rollback: true`. */
export function createUpgradeRequests({ ctx, repo, audit }: HostParts, releases: Releases) {
  const requestTx = ctx.transaction((hostId: number, version: string, rollback: boolean, who: Who, now: number) => {
    const host = requireHost(repo, hostId);
    repo.setUpgrade(hostId, requestedUpgrade(host, version, rollback, now));
    audit.write({ ...who, action: 'host.upgrade_request', target: `host:${hostId}`, detail: { host: host.hostname, version, ...(rollback ? { rollback } : {}) } });
  });

  return (hostId: number, request: { version?: string; rollback?: boolean }, who: Who): void => {
    const version = request.version ?? releases.currentVersion();
    if (!version) throw conflict('no agent release is available');
    if (!releases.versions().includes(version)) throw badRequest('unknown agent version');
    requestTx(hostId, version, request.rollback === true, who, ctx.clock.now());
  };
}
