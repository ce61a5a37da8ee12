import type { AppContext } from '../context.js';
import type { StorageReport, StorageVolumesUpload } from '../contract/inputs/storage.js';
import type { HostStorage, StorageVolume } from '../contract/storage.js';
import type { Db } from '../db/database.js';
import { conflict, notFound, validationFailed } from '../errors.js';
import { isoSeconds } from '../time.js';

interface StorageRow {
  id: number;
  storage: string;
  type: string;
  content: string;
  avail: number | null;
  total: number | null;
  active: 0 | 1;
  shared: 0 | 1;
}

type StorageWithVolumes = StorageRow & { volumes: string; volumes_at: number | null };

const presentStorage = (row: StorageRow): StorageReport => ({
  storage: row.storage,
  type: row.type,
  content: JSON.parse(row.content) as string[],
  avail: row.avail,
  total: row.total,
  active: row.active === 1,
  shared: row.shared === 1,
});

const COLUMNS = 'id, storage, type, content, avail, total, active, shared';

/** SQL of a host's storages and their volumes (server/db/migrations/0019). A heartbeat never reads the volumes. */
function createStorageRepo(db: Db) {
  const s = {
    hostExists: db.prepare<[number], number>('SELECT 1 FROM hosts WHERE id = ?').pluck(),
    setSha: db.prepare<[string | null, number]>('UPDATE hosts SET storage_sha256 = ? WHERE id = ?'),
    namesOf: db.prepare<[number], { id: number; storage: string }>('SELECT id, storage FROM host_storages WHERE host_id = ?'),
    storageOf: db.prepare<[number, string], StorageRow>(`SELECT ${COLUMNS} FROM host_storages WHERE host_id = ? AND storage = ?`),
    withVolumesOf: db.prepare<[number], StorageWithVolumes>(`SELECT ${COLUMNS}, volumes, volumes_at FROM host_storages WHERE host_id = ? ORDER BY storage`),
    upsert: db.prepare<[number, string, string, string, number | null, number | null, number, number]>(
      `INSERT INTO host_storages (host_id, storage, type, content, avail, total, active, shared) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (host_id, storage) DO UPDATE SET type = excluded.type, content = excluded.content, avail = excluded.avail,
         total = excluded.total, active = excluded.active, shared = excluded.shared`,
    ),
    delete: db.prepare<[number]>('DELETE FROM host_storages WHERE id = ?'),
    setVolumes: db.prepare<[string, number, number]>('UPDATE host_storages SET volumes = ?, volumes_at = ? WHERE id = ?'),
  };

  return {
    hostExists: (hostId: number) => s.hostExists.get(hostId) !== undefined,
    setSha: (hostId: number, sha: string | null) => void s.setSha.run(sha, hostId),
    storageOf: (hostId: number, storage: string) => s.storageOf.get(hostId, storage),
    withVolumesOf: (hostId: number) => s.withVolumesOf.all(hostId),
    /** The storages as listed: each upserted (its volumes kept), and those no longer listed deleted with their volumes. */
    replaceStorages(hostId: number, storages: readonly StorageReport[]): void {
      const listed = new Set(storages.map((st) => st.storage));
      for (const { id, storage } of s.namesOf.all(hostId)) if (!listed.has(storage)) s.delete.run(id);
      for (const st of storages) s.upsert.run(hostId, st.storage, st.type, JSON.stringify(st.content), st.avail, st.total, Number(st.active), Number(st.shared));
    },
    setVolumes: (storageId: number, json: string, now: number) => void s.setVolumes.run(json, now, storageId),
  };
}

export type HostStorages = ReturnType<typeof createHostStorages>;

/**
 * PRODUCT.md "Host storage, downloads and the file cache": the storages each heartbeat lists, the
 * volumes the agent sends for each (`POST /api/agent/storage`), and `GET /api/hosts/:id/storage`.
 * Operations read a host's storage through `storageOf` to check a download or a push.
 */
export function createHostStorages(ctx: AppContext) {
  const repo = createStorageRepo(ctx.db);

  const volumesTx = ctx.transaction((hostId: number, storage: string, json: string, now: number) => {
    // "a storage the host's last heartbeat did not list → 409 naming it": checked where the volumes are written.
    const row = repo.storageOf(hostId, storage);
    if (!row) throw conflict(`storage ${storage} is not one this host's last heartbeat listed`);
    repo.setVolumes(row.id, json, now);
  });

  return {
    /**
     * Inside the heartbeat's transaction: the storages when the heartbeat lists them (an older agent
     * sends none, and what was stored stays), and the hash of the volumes the agent last sent.
     */
    report(hostId: number, storages: readonly StorageReport[] | undefined, sha: string | null | undefined): void {
      if (storages !== undefined) repo.replaceStorages(hostId, lastOfEach(storages, (st) => st.storage));
      if (sha !== undefined) repo.setSha(hostId, sha);
    },

    /** POST /api/agent/storage: the storage's volumes, replacing what was sent before. */
    volumes(hostId: number, body: StorageVolumesUpload): void {
      // Proxmox names every volume after its storage: one of another storage is a wrong report, said field by field.
      const errors = body.volumes.flatMap((v, i) =>
        v.volid.startsWith(`${body.storage}:`) ? [] : [{ field: `volumes.${i}.volid`, message: `must be a volume of storage ${body.storage} (${body.storage}:…)` }],
      );
      if (errors.length) throw validationFailed(errors.slice(0, 20));
      // Made before the transaction, which then only writes it: the same volume id twice is the last one sent.
      const volumes = lastOfEach(body.volumes, (v) => v.volid).sort((a, b) => (a.volid < b.volid ? -1 : a.volid > b.volid ? 1 : 0));
      const json = JSON.stringify(volumes.map(({ volid, format, size, ctime }): StorageVolume => ({ volid, format, size, ctime })));
      volumesTx(hostId, body.storage, json, ctx.clock.now());
    },

    /** GET /api/hosts/:id/storage */
    list(hostId: number): HostStorage[] {
      if (!repo.hostExists(hostId)) throw notFound('host not found');
      return repo.withVolumesOf(hostId).map((row) => ({
        ...presentStorage(row),
        volumes: JSON.parse(row.volumes) as StorageVolume[],
        volumes_at: row.volumes_at === null ? null : isoSeconds(row.volumes_at),
      }));
    },

    /** A storage of the host's last heartbeat, or undefined. */
    storageOf(hostId: number, storage: string): StorageReport | undefined {
      const row = repo.storageOf(hostId, storage);
      return row && presentStorage(row);
    },
  };
}

/** One entry per key, where the last one listed stands (as for guests). */
function lastOfEach<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...new Map(items.map((item) => [key(item), item])).values()];
}
