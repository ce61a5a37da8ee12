import type { Guest } from '../contract/hosts.js';
import type { Db } from '../db/database.js';
import type { Placement, Placements } from '../registry/service.js';

/**
 * Where each vmid runs, as the registry shows it (`host`, `guest_status`): the live host whose last
 * heartbeat listed it (the lowest host id when several do: a conflict their drift shows). Read in one
 * query into a map when first asked and kept until something it depends on changes, so listing
 * instances costs one map lookup per row.
 */
export function createPlacements(db: Db) {
  // Highest host id first: the lowest one, written last, wins.
  const all = db
    .prepare<[], [number, number, string, string]>(
      "SELECT g.vmid, h.id, h.hostname, g.status FROM host_guests g JOIN hosts h ON h.id = g.host_id WHERE h.state != 'deleted' ORDER BY g.host_id DESC",
    )
    .raw(true);
  let cache: Map<number, Placement> | undefined;

  return {
    lookup(): Placements {
      if (!cache) {
        cache = new Map();
        for (const [vmid, id, name, status] of all.all()) cache.set(vmid, { host: { id, name }, guest_status: status });
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

/** The vmids whose placement a host's new guest list moves, with what moved (`host`, `guest_status`). */
export function movedGuests(before: readonly Guest[], after: readonly Guest[]): Map<number, string[]> {
  const old = new Map(before.map((g) => [g.vmid, g.status]));
  const moved = new Map<number, string[]>();
  for (const g of after) {
    const was = old.get(g.vmid);
    if (was === undefined) moved.set(g.vmid, ['host', 'guest_status']);
    else if (was !== g.status) moved.set(g.vmid, ['guest_status']);
    old.delete(g.vmid);
  }
  for (const vmid of old.keys()) moved.set(vmid, ['host', 'guest_status']);
  return moved;
}
