import type { Db } from '../db/database.js';
import type { Placement, Placements } from '../registry/service.js';

interface Reporter {
  placement: Placement;
  online: boolean;
  /** Its host's last heartbeat (ms). */
  at: number;
}

/** Online before offline; among online hosts the lowest id, among offline ones the latest report. */
function outranks(a: Reporter, b: Reporter): boolean {
  if (a.online !== b.online) return a.online;
  if (!a.online && a.at !== b.at) return a.at > b.at;
  return a.placement.host.id < b.placement.host.id;
}

/**
 * Where each vmid runs, as the registry shows it (`host`, `guest_status`). "vmids are unique per
 * cluster, not per host: a vmid last reported by a host that is offline or deleted does not conflict
 * with the same vmid on an online host; the most recent report wins and the instance's host moves."
 * So: an online host that lists it (the lowest host id when several do: a conflict their drift
 * shows), else the host that listed it last. Read in one query into a map when first asked and kept
 * until something it depends on changes (a host going offline or coming back is announced on
 * host.status), so listing instances costs one map lookup per row. `freshSince(now)`: the oldest
 * heartbeat of an online host.
 */
export function createPlacements(db: Db, freshSince: () => number) {
  const all = db
    .prepare<[], [number, number, string, string, number | null]>(
      "SELECT g.vmid, h.id, h.hostname, g.status, h.last_heartbeat_at FROM host_guests g JOIN hosts h ON h.id = g.host_id WHERE h.state != 'deleted'",
    )
    .raw(true);
  let cache: Map<number, Placement> | undefined;

  return {
    lookup(): Placements {
      if (!cache) {
        const fresh = freshSince();
        const best = new Map<number, Reporter>();
        for (const [vmid, id, name, status, at] of all.all()) {
          const reporter: Reporter = { placement: { host: { id, name }, guest_status: status }, online: at !== null && at >= fresh, at: at ?? 0 };
          const held = best.get(vmid);
          if (!held || outranks(reporter, held)) best.set(vmid, reporter);
        }
        cache = new Map([...best].map(([vmid, r]) => [vmid, r.placement]));
      }
      return cache;
    },
    /** Guests, their statuses, a host's name or state changed: read again when next asked. Call it once the change has committed. */
    invalidate(): void {
      cache = undefined;
    },
  };
}

export type PlacementCache = ReturnType<typeof createPlacements>;
