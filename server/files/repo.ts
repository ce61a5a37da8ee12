import type { Db } from '../db/database.js';

export interface FileRow {
  id: number;
  name: string;
  size: number;
  sha256: string;
  uploaded_by: string;
  uploaded_at: string;
  /** ms */
  used_at: number;
}

export function createFileRepo(db: Db) {
  const s = {
    insert: db.prepare<[string, number, string, string, string, number], { id: number }>(
      'INSERT INTO files (name, size, sha256, uploaded_by, uploaded_at, used_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id',
    ),
    byId: db.prepare<[number], FileRow>('SELECT * FROM files WHERE id = ?'),
    bySha256: db.prepare<[string], FileRow>('SELECT * FROM files WHERE sha256 = ?'),
    all: db.prepare<[], FileRow>('SELECT * FROM files ORDER BY used_at DESC, id DESC'),
    // Least recently used first: the order eviction takes them in.
    leastRecentlyUsed: db.prepare<[], FileRow>('SELECT * FROM files ORDER BY used_at, id'),
    usedBytes: db.prepare<[], number>('SELECT coalesce(sum(size), 0) FROM files').pluck(),
    touch: db.prepare<[number, number], void>('UPDATE files SET used_at = max(used_at, ?) WHERE id = ?'),
    remove: db.prepare<[number], void>('DELETE FROM files WHERE id = ?'),
  };
  return {
    insert: (f: Omit<FileRow, 'id'>) => s.insert.get(f.name, f.size, f.sha256, f.uploaded_by, f.uploaded_at, f.used_at)!.id,
    byId: (id: number) => s.byId.get(id),
    bySha256: (sha256: string) => s.bySha256.get(sha256),
    /** Most recently used first. */
    all: () => s.all.all(),
    leastRecentlyUsed: () => s.leastRecentlyUsed.all(),
    usedBytes: () => s.usedBytes.get()!,
    touch: (id: number, now: number) => s.touch.run(now, id),
    remove: (id: number) => s.remove.run(id),
  };
}

export type FileRepo = ReturnType<typeof createFileRepo>;
