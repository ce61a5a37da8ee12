import type { Db } from '../db/database.js';
import type { Script, ScriptVersion } from '../contract/scripts.js';
import { SCRIPT_VERSIONS_KEPT } from '../contract/scripts.js';

export type ScriptRow = Script;
export type ScriptValues = Omit<ScriptRow, 'id'>;
export interface VersionRow extends ScriptVersion {
  body: string;
}

const SUMMARY = 'id, name, description, runs_on, interpreter, size, sha256, version, updated_by, updated_at';
const VERSION = 'version, size, sha256, updated_by, updated_at';

/** The tables of scripts and their versions (migration 0022). */
export function createScriptRepo(db: Db) {
  const s = {
    list: db.prepare<[], Omit<ScriptRow, 'body'>>(`SELECT ${SUMMARY} FROM scripts ORDER BY name COLLATE NOCASE, id`),
    one: db.prepare<[number], ScriptRow>(`SELECT ${SUMMARY}, body FROM scripts WHERE id = ?`),
    all: db.prepare<[], ScriptRow>(`SELECT ${SUMMARY}, body FROM scripts ORDER BY id`),
    insert: db.prepare<[string, string, string, string, string, number, string, number, string, string], { id: number }>(
      `INSERT INTO scripts (name, description, runs_on, interpreter, body, size, sha256, version, updated_by, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
    ),
    insertWithId: db.prepare<[number, string, string, string, string, string, number, string, number, string, string]>(
      `INSERT INTO scripts (id, name, description, runs_on, interpreter, body, size, sha256, version, updated_by, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    update: db.prepare<[string, string, string, string, string, number, string, number, string, string, number]>(
      `UPDATE scripts SET name = ?, description = ?, runs_on = ?, interpreter = ?, body = ?, size = ?, sha256 = ?, version = ?,
         updated_by = ?, updated_at = ? WHERE id = ?`,
    ),
    delete: db.prepare<[number]>('DELETE FROM scripts WHERE id = ?'),
    deleteAll: db.prepare('DELETE FROM scripts'),
    versions: db.prepare<[number], ScriptVersion>(`SELECT ${VERSION} FROM script_versions WHERE script_id = ? ORDER BY version DESC`),
    allVersions: db.prepare<[], VersionRow & { script_id: number }>(`SELECT script_id, ${VERSION}, body FROM script_versions ORDER BY script_id, version`),
    version: db.prepare<[number, number], VersionRow>(`SELECT ${VERSION}, body FROM script_versions WHERE script_id = ? AND version = ?`),
    before: db.prepare<[number, number], VersionRow>(
      `SELECT ${VERSION}, body FROM script_versions WHERE script_id = ? AND version < ? ORDER BY version DESC LIMIT 1`,
    ),
    insertVersion: db.prepare<[number, number, string, number, string, string, string]>(
      'INSERT INTO script_versions (script_id, version, body, size, sha256, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    prune: db.prepare<[number, number]>('DELETE FROM script_versions WHERE script_id = ? AND version <= ?'),
  };
  const args = (v: ScriptValues) => [v.name, v.description, v.runs_on, v.interpreter, v.body, v.size, v.sha256, v.version, v.updated_by, v.updated_at] as const;

  return {
    list: () => s.list.all(),
    one: (id: number) => s.one.get(id),
    all: () => s.all.all(),
    /** Throws SQLITE_CONSTRAINT_UNIQUE when the name (in any case) is taken. */
    insert: (v: ScriptValues) => s.insert.get(...args(v))!.id,
    /** A restored script keeps its id: campaigns name scripts by id. */
    insertWithId: (id: number, v: ScriptValues) => s.insertWithId.run(id, ...args(v)),
    update: (id: number, v: ScriptValues) => s.update.run(...args(v), id),
    delete: (id: number) => s.delete.run(id).changes > 0,
    /** Every script and (by cascade) version: only a restore does this. */
    deleteAll: () => s.deleteAll.run(),
    versions: (id: number) => s.versions.all(id),
    allVersions: () => s.allVersions.all(),
    version: (id: number, version: number) => s.version.get(id, version),
    /** The newest kept version before `version`, if any. */
    before: (id: number, version: number) => s.before.get(id, version),
    /** Adds a version and lets the oldest go past the last 20. */
    addVersion(id: number, v: Pick<ScriptValues, 'version' | 'body' | 'size' | 'sha256' | 'updated_by' | 'updated_at'>): void {
      s.insertVersion.run(id, v.version, v.body, v.size, v.sha256, v.updated_by, v.updated_at);
      s.prune.run(id, v.version - SCRIPT_VERSIONS_KEPT);
    },
  };
}

export type ScriptRepo = ReturnType<typeof createScriptRepo>;
