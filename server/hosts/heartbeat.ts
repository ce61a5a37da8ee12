import type { AgentCommand, HeartbeatAnswer } from '../contract/hosts.js';
import { invalidToken } from '../errors.js';
import type { DriftResult } from './drift-apply.js';
import { diffGuests, hashGuests, normalizeGuests, readStoredGuests, type GuestChanges } from './guest-list.js';
import { createHeartbeatLimit } from './heartbeat-limit.js';
import { ONLINE_INTERVALS } from './present.js';
import type { HostParts } from './parts.js';
import type { PlacementCache } from './placements.js';
import { collectorsOf, type HostRow } from './repo.js';
import type { DriftApply, Guest } from '../contract/inputs/hosts.js';
import type { HeartbeatBody } from './schema.js';
import type { HostStorages } from './storage.js';
import { sha256 } from './tokens.js';

/** A heartbeat's guest list as its transaction takes it, worked out before it a slice per turn. */
interface GuestPlan {
  guests: Guest[];
  hash: string;
  /** When the stored list differed: the hash of the list read, and the changes from it to `guests`. */
  from?: { hash: string; changes: GuestChanges };
}

/**
 * The heartbeat protocol: an agent reports its facts and guests, and the answer carries the commands
 * due for it (server/operations/commands). Online and offline are read from the last heartbeat's time.
 */
export function createHeartbeats(
  parts: HostParts,
  applyDrift: (hostId: number, request: DriftApply, who: null) => DriftResult,
  placements: PlacementCache,
  commandsFor: (host: HostRow, now: number) => { commands: AgentCommand[]; announcesStatus: boolean },
  storages: Pick<HostStorages, 'report'>,
  onHeartbeat?: (hostId: number, body: HeartbeatBody, now: number) => Promise<() => void>,
) {
  const { ctx, repo, view, instances } = parts;
  const { clock, bus } = ctx;
  const limit = createHeartbeatLimit(clock, view.intervalS);

  async function planGuests(hostId: number | undefined, reported: readonly Guest[]): Promise<GuestPlan> {
    const guests = normalizeGuests(reported);
    const hash = await hashGuests(guests);
    if (hostId === undefined || repo.guestsHashOf(hostId) === hash) return { guests, hash };
    const stored = await readStoredGuests((after, limit) => repo.guestPage(hostId, after, limit));
    return { guests, hash, from: { hash: stored.hash, changes: diffGuests(stored.guests, guests) } };
  }

  const heartbeatTx = ctx.transaction((tokenHash: string, body: HeartbeatBody, now: number, plan: GuestPlan, listener?: () => void) => {
    // Re-checked inside the transaction: a removal delivered to a parallel heartbeat revoked the token.
    const tok = repo.hostTokenByHash(tokenHash);
    const before = tok && tok.revoked_at === null ? repo.hostById(tok.host_id) : undefined;
    if (!before || before.state === 'deleted') throw invalidToken();
    const wasOnline = view.statusOf(before, now) === 'online';
    repo.updateFacts({
      id: before.id,
      hostname: body.hostname,
      agent_version: body.agent_version,
      agent_started_at: body.started_at,
      last_heartbeat_at: now,
      addresses: JSON.stringify(body.addresses),
      uptime_s: body.uptime_s ?? null,
      hypervisor_version: body.hypervisor_version,
      allows_scripts: body.allows_scripts ? 1 : 0,
    });
    storages.report(before.id, body.storages, body.storage_sha256);
    const { guests, hash } = plan;
    let moved = new Map<number, string[]>();
    if (hash !== before.guests_hash) {
      // Worked out against what was stored then; read again here when another write came in between.
      const changes = plan.from?.hash === before.guests_hash ? plan.from.changes : diffGuests(repo.guestsOf(before.id), guests);
      repo.changeGuests(before.id, changes.upserts, changes.deletes);
      repo.setGuestsHash(before.id, hash);
      moved = changes.moved;
    }
    if (body.hostname !== before.hostname) for (const g of guests) if (!moved.has(g.vmid)) moved.set(g.vmid, ['host']);
    // The registry shows where each instance runs and its guest's status: what moved is announced once this commits.
    if (moved.size) {
      ctx.afterCommit(() => {
        placements.invalidate();
        instances.placementsChanged(moved);
      });
    }
    listener?.();
    const host = repo.hostById(before.id)!;
    const { commands, announcesStatus } = commandsFor(host, now);
    bus.publish('host.heartbeat', view.eventOf(host));
    if (!wasOnline || announcesStatus) bus.publish('host.status', view.eventOf(host));
    return { host, commands };
  });

  let lastSweep = clock.now();

  return {
    /** Spends one heartbeat of the host's budget (before its body is read), or throws 429. */
    admit: (host: HostRow) => limit.take(host.id),

    /**
     * What a 10,000-guest report costs is spent before the transaction, a slice per turn (the list's
     * hash and changes, the metric store's numbers), so that other requests are answered meanwhile;
     * the transaction checks that what they were worked out against still holds.
     */
    async heartbeat(token: string, body: HeartbeatBody): Promise<HeartbeatAnswer> {
      const now = clock.now();
      const tokenHash = sha256(token);
      const hostId = repo.hostTokenByHash(tokenHash)?.host_id;
      const plan = await planGuests(hostId, body.guests);
      const listener = hostId !== undefined && onHeartbeat ? await onHeartbeat(hostId, body, now) : undefined;
      const { host, commands } = heartbeatTx(tokenHash, body, now, plan, listener);
      if (host.sync_registry === 1 && host.state === 'active') applyDrift(host.id, { all: true }, null);
      // "sent to the agent in heartbeat answers; an agent skips what is off"
      return { heartbeat_interval_s: view.intervalS, commands, collectors: collectorsOf(host) };
    },

    /** Announces on host.status the hosts that went offline (no heartbeat within three intervals) since the last call. */
    sweepOffline(now: number): void {
      const line = ONLINE_INTERVALS * view.intervalS * 1000;
      for (const host of repo.wentOffline(lastSweep - line, now - line)) bus.publish('host.status', view.eventOf(host));
      lastSweep = now;
    },
  };
}
