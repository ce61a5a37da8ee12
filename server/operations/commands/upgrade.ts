import { nameOf } from '../../audit.js';
import { randomUUID } from 'node:crypto';
import type { UpgradeCommand } from '../../contract/hosts.js';
import { badRequest, conflict } from '../../errors.js';
import { requireHost, type Who } from '../../hosts/parts.js';
import { announceOperation, type OperationParts } from '../parts.js';
import { rowWindowOpen, type MaintenanceRepo } from '../maintenance.js';
import { offeredVersion, requestedVersion } from '../../releases/channels.js';
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

/**
 * POST /api/hosts/:id/upgrade (and each host of an `agent.upgrade` campaign): no version means the
 * host's pin, else the newest of its channel; a pinned host moves only to its pin (409 naming it), a
 * `stable` one never to a pre-release; an older version needs `rollback: true`. The host's channel and
 * pin are read inside the transaction that asks, so a PATCH saved meanwhile is not raced past.
 */
export function createUpgradeRequests(parts: OperationParts, releases: Releases) {
  const { ctx, repo, audit } = parts;
  const requestTx = ctx.transaction((hostId: number, asked: string | undefined, rollback: boolean, who: Who, now: number) => {
    const host = requireHost(repo, hostId);
    const version = requestedVersion(host, asked, releases.newest);
    if (!releases.versions().includes(version)) throw conflict(`agent ${version} is not shipped by this server any more`);
    const id = repo.insertUpgrade(randomUUID(), hostId, requestedUpgrade(host, version, rollback, now), who.actor);
    announceOperation(parts, id);
    audit.write({ action: 'host.upgrade_request', subject: { type: 'host', id: String(host.id), name: host.hostname }, summary: `${nameOf()} asked host ${host.hostname} to ${rollback ? 'roll back' : 'upgrade'} to ${version}`, detail: { host: host.hostname, version, ...(rollback ? { rollback } : {}) } });
    return id;
  });

  /** Answers the upgrade's operation id (a campaign follows it). */
  return (hostId: number, request: { version?: string; rollback?: boolean }, who: Who): string => {
    if (request.version !== undefined && !releases.versions().includes(request.version)) throw badRequest('unknown agent version');
    return requestTx(hostId, request.version, request.rollback === true, who, ctx.clock.now());
  };
}

/**
 * "With auto_upgrade, an agent older than the shipped version is upgraded inside a window only":
 * run by the sweep, it asks for the newest version of each such host's channel when the host is
 * online inside one of its windows, is not pinned, and has no upgrade open. A version that already
 * failed on a host is not asked again by itself (an administrator may); the operation is the
 * upgrade's, audited with no actor.
 */
export function createAutoUpgrades(parts: OperationParts, releases: Releases, policies: MaintenanceRepo) {
  const { ctx, repo, audit, isOnline } = parts;
  const requestTx = ctx.transaction((hostId: number, now: number) => {
    const host = repo.hostById(hostId);
    if (!host || host.state !== 'active' || !isOnline(host, now)) return;
    const version = offeredVersion(host, releases.newest);
    if (version === undefined) return;
    if (host.upgrade_state === 'pending' || host.upgrade_state === 'in_progress') return;
    if (host.upgrade_version === version && host.upgrade_state === 'failed') return;
    const id = repo.insertUpgrade(randomUUID(), hostId, requestedUpgrade(host, version, false, now), null, true);
    audit.write({ actor: { type: 'system', name: 'upgrades' }, ip: null, action: 'host.upgrade_request', subject: { type: 'host', id: String(host.id), name: host.hostname }, summary: `host ${host.hostname} was asked to upgrade to ${version} (automatic upgrade)`, detail: { host: host.hostname, version, auto: true } });
    announceOperation(parts, id);
  });

  return (now: number): void => {
    for (const policy of policies.autoUpgrading()) if (rowWindowOpen(policy, now)) requestTx(policy.host_id, now);
  };
}
