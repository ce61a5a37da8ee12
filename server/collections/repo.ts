import type { BackupCollection, CollectionFilter } from '../contract/collections.js';
import type { Db } from '../db/database.js';

type Row = { id: number; name: string; description: string; filter: string };
const toCollection = (row: Row): BackupCollection => ({ id: row.id, name: row.name, description: row.description, filter: JSON.parse(row.filter) as CollectionFilter });

export type CollectionRepo = ReturnType<typeof createCollectionRepo>;

/** SQL of the collections table (migration 0021): each a name, a description and a filter kept as JSON. */
export function createCollectionRepo(db: Db) {
  const all = db.prepare<[], Row>('SELECT id, name, description, filter FROM collections ORDER BY name COLLATE NOCASE, id');
  const byId = db.prepare<[number], Row>('SELECT id, name, description, filter FROM collections WHERE id = ?');
  const insert = db.prepare<[string, string, string]>('INSERT INTO collections (name, description, filter) VALUES (?, ?, ?)');
  const insertWithId = db.prepare<[number, string, string, string]>('INSERT INTO collections (id, name, description, filter) VALUES (?, ?, ?, ?)');
  const update = db.prepare<[string, string, string, number]>('UPDATE collections SET name = ?, description = ?, filter = ? WHERE id = ?');
  const remove = db.prepare<[number]>('DELETE FROM collections WHERE id = ?');
  const removeAll = db.prepare('DELETE FROM collections');

  return {
    all: (): BackupCollection[] => all.all().map(toCollection),
    get: (id: number): BackupCollection | undefined => {
      const row = byId.get(id);
      return row && toCollection(row);
    },
    insert: (c: Omit<BackupCollection, 'id'>): number => Number(insert.run(c.name, c.description, JSON.stringify(c.filter)).lastInsertRowid),
    update: (c: BackupCollection): boolean => update.run(c.name, c.description, JSON.stringify(c.filter), c.id).changes > 0,
    remove: (id: number): boolean => remove.run(id).changes > 0,
    /** Replaces every collection with these, ids kept (a restore). */
    replaceAll(rows: readonly BackupCollection[]): void {
      removeAll.run();
      for (const c of rows) insertWithId.run(c.id, c.name, c.description, JSON.stringify(c.filter));
    },
  };
}
