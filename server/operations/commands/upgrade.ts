import { nameOf } from '../../audit.js';
import { randomUUID } from 'node:crypto';
import type { UpgradeCommand } from '../../contract/hosts.js';
import { badRequest, conflict } from '../../errors.js';
import { requireHost, type Who } from '../../hosts/parts.js';
import { announceOperation, type OperationParts } from '../parts.js';
import { rowWindowOpen, type MaintenanceRepo } from '../maintenance.js';
import { compareVersions } from '../../contract/versions.js';
import type { Releases } from '../../releases/releases.js';
import { offeredUpgrade, requestedUpgrade, settledUpgrade, timedOutUpgrade, UPGRADE_TIMEOUT_MS } from '../../releases/upgrades.js';
import { commandKind } from './types.js';

type Offer = NonNullable<ReturnType<typeof offeredUpgrade>>;

/**
 * An agent upgrade (the states are in server/releases/upgrades.ts): asked for by an administrator,
 * offered once in a heartbeat answer, settled by a later heartbeat or by the sweep when it times out.
 * A host being removed gets no upgrade and settles none.
 */
export const upgrade = commandKind<UpgradeCommand, Offer>({
  settle(contact) {
    const { repo, audit, host, now } = contact;
    const settled = host.state === 'active' ? settledUpgrade(host, now) : undefined;
    if (!settled) return;
    announceOperation(contact, repo.setUpgrade(host.id, settled));
    audit.write({
      actor: { type: 'agent', id: host.id, name: host.hostname },
      ip: null,
      action: `host.upgrade_${settled.state}`,
      subject: { type: 'host', id: String(host.id), name: host.hostname },
      summary: settled.state === 'succeeded' ? `host ${host.hostname} upgraded to ${String(host.upgrade_version)}` : `the upgrade of host ${host.hostname} failed`,
      detail: { version: host.upgrade_version, from: host.upgrade_from },
    });
  },

  due({ host, now }) {
    const offer = host.state === 'active' ? offeredUpgrade(host, now) : undefined;
    return offer ? [offer] : [];
  },
  deliver(contact, offer) {
    announceOperation(contact, contact.repo.setUpgrade(contact.host.id, offer.record));
    return offer;
  },
  render: ({ version, rollback }) => ({ type: 'upgrade', version, ...(rollback ? { rollback: true as const } : {}) }),

  sweep(parts, now) {
    const { ctx, repo, audit } = parts;
    const fail = ctx.transaction((hostId: number) => {
      const host = repo.hostById(hostId);
      const failed = host && timedOutUpgrade(host);
      if (!failed) return;
      announceOperation(parts, repo.setUpgrade(host.id, failed));
      audit.write({
        actor: { type: 'system', name: 'upgrades' },
        ip: null,
        action: 'host.upgrade_failed',
        subject: { type: 'host', id: String(host.id), name: host.hostname },
        summary: `the upgrade of host ${host.hostname} failed: no heartbeat from the new version within 5 minutes`,
        detail: { host: host.hostname, version: host.upgrade_version, from: host.upgrade_from, reason: 'no heartbeat from the new version within 5 minutes' },
      });
      parts.announceStatus(host.id);
    });
    for (const stale of repo.upgradesTimedOut(now - UPGRADE_TIMEOUT_MS)) fail(stale.id);
  },
});

/** POST /api/hosts/:id/upgrade: no version means the shipped one; an older one needs `rollback: true`. */
export function createUpgradeRequests(parts: OperationParts, releases: Releases) {
  const { ctx, repo, audit } = parts;
  const requestTx = ctx.transaction((hostId: number, version: string, rollback: boolean, who: Who, now: number) => {
    const host = requireHost(repo, hostId);
    const id = repo.insertUpgrade(randomUUID(), hostId, requestedUpgrade(host, version, rollback, now), who.actor);
    announceOperation(parts, id);
    audit.write({ action: 'host.upgrade_request', subject: { type: 'host', id: String(host.id), name: host.hostname }, summary: `${nameOf()} asked host ${host.hostname} to ${rollback ? 'roll back' : 'upgrade'} to ${version}`, detail: { host: host.hostname, version, ...(rollback ? { rollback } : {}) } });
    return id;
  });

  /** Answers the upgrade's operation id (a campaign follows it). */
  return (hostId: number, request: { version?: string; rollback?: boolean }, who: Who): string => {
    const version = request.version ?? releases.currentVersion();
    if (!version) throw conflict('no agent release is available');
    if (!releases.versions().includes(version)) throw badRequest('unknown agent version');
    return requestTx(hostId, version, request.rollback === true, who, ctx.clock.now());
  };
}

/**
 * "With auto_upgrade, an agent older than the shipped version is upgraded inside a window only":
 * run by the sweep, it asks for the shipped version for each such host that is online inside one of
 * its windows and has no upgrade open. A version that already failed on a host is not asked again by
 * itself (an administrator may); the operation is the upgrade's, audited with no actor.
 */
export function createAutoUpgrades(parts: OperationParts, releases: Releases, policies: MaintenanceRepo) {
  const { ctx, repo, audit, isOnline } = parts;
  const requestTx = ctx.transaction((hostId: number, version: string, now: number) => {
    const host = repo.hostById(hostId);
    if (!host || host.state !== 'active' || !isOnline(host, now)) return;
    if (compareVersions(version, host.agent_version) <= 0) return;
    if (host.upgrade_state === 'pending' || host.upgrade_state === 'in_progress') return;
    if (host.upgrade_version === version && host.upgrade_state === 'failed') return;
    const id = repo.insertUpgrade(randomUUID(), hostId, requestedUpgrade(host, version, false, now), null, true);
    audit.write({ actor: { type: 'system', name: 'upgrades' }, ip: null, action: 'host.upgrade_request', subject: { type: 'host', id: String(host.id), name: host.hostname }, summary: `host ${host.hostname} was asked to upgrade to ${version} (automatic upgrade)`, detail: { host: host.hostname, version, auto: true } });
    announceOperation(parts, id);
  });

  return (now: number): void => {
    const shipped = releases.currentVersion();
    if (!shipped) return;
    for (const policy of policies.autoUpgrading()) if (rowWindowOpen(policy, now)) requestTx(policy.host_id, shipped, now);
  };
}
