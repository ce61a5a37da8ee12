import { createHash } from 'node:crypto';
import type { HeartbeatAnswer } from '../contract/hosts.js';
import { invalidToken } from '../errors.js';
import { commandsFor } from './commands/index.js';
import type { DriftResult } from './drift-apply.js';
import { createHeartbeatLimit } from './heartbeat-limit.js';
import { ONLINE_INTERVALS } from './present.js';
import type { HostParts } from './parts.js';
import { movedGuests, type PlacementCache } from './placements.js';
import type { HostRow } from './repo.js';
import type { DriftApply, Guest, HeartbeatBody } from './schema.js';
import { sha256 } from './tokens.js';

const guestsHash = (guests: readonly Guest[]) =>
  createHash('sha256')
    .update(JSON.stringify([...guests].sort((a, b) => a.vmid - b.vmid).map((g) => [g.vmid, g.name, g.type, g.status, g.config_sha256 ?? null, g.template, g.lock])))
    .digest('base64');

/**
 * The heartbeat protocol: an agent reports its facts and guests, and the answer carries the commands
 * due for it (server/hosts/commands). Online and offline are read from the last heartbeat's time.
 */
export function createHeartbeats(
  parts: HostParts,
  applyDrift: (hostId: number, request: DriftApply, who: null) => DriftResult,
  placements: PlacementCache,
  onHeartbeat?: (hostId: number, body: HeartbeatBody, now: number) => void,
) {
  const { ctx, repo, view, instances } = parts;
  const { clock, bus } = ctx;
  const limit = createHeartbeatLimit(clock, view.intervalS);

  const heartbeatTx = ctx.transaction((tokenHash: string, body: HeartbeatBody, now: number) => {
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
    });
    // Duplicate vmids in one report: the last one wins.
    const guests = [...new Map(body.guests.map((g) => [g.vmid, g])).values()];
    const hash = guestsHash(guests);
    let moved = new Map<number, string[]>();
    if (hash !== before.guests_hash) {
      moved = movedGuests(repo.guestsOf(before.id), guests);
      repo.replaceGuests(before.id, guests);
      repo.setGuestsHash(before.id, hash);
    }
    if (body.hostname !== before.hostname) for (const g of guests) if (!moved.has(g.vmid)) moved.set(g.vmid, ['host']);
    // The registry shows where each instance runs and its guest's status: what moved is announced once this commits.
    if (moved.size) {
      ctx.afterCommit(() => {
        placements.invalidate();
        instances.placementsChanged(moved);
      });
    }
    onHeartbeat?.(before.id, body, now);
    const host = repo.hostById(before.id)!;
    const { commands, announcesStatus } = commandsFor({ ...parts, host, now });
    bus.publish('host.heartbeat', view.eventOf(host));
    if (!wasOnline || announcesStatus) bus.publish('host.status', view.eventOf(host));
    return { host, commands };
  });

  let lastSweep = clock.now();

  return {
    /** Spends one heartbeat of the host's budget (before its body is read), or throws 429. */
    admit: (host: HostRow) => limit.take(host.id),

    heartbeat(token: string, body: HeartbeatBody): HeartbeatAnswer {
      const { host, commands } = heartbeatTx(sha256(token), body, clock.now());
      if (host.sync_registry === 1 && host.state === 'active') applyDrift(host.id, { all: true }, null);
      return { heartbeat_interval_s: view.intervalS, commands };
    },

    /** Announces on host.status the hosts that went offline (no heartbeat within three intervals) since the last call. */
    sweepOffline(now: number): void {
      const line = ONLINE_INTERVALS * view.intervalS * 1000;
      for (const host of repo.wentOffline(lastSweep - line, now - line)) bus.publish('host.status', view.eventOf(host));
      lastSweep = now;
    },
  };
}
