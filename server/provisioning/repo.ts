import type { CloudConfig, ServerKey } from '../contract/provisioning.js';
import type { Db } from '../db/database.js';

/** A row is what the wire shows plus, for a key, its canonical line (read by deploy, never answered). */
export interface ServerKeyRow extends ServerKey {
  public_key: string;
}

export type CloudConfigRow = CloudConfig;

export type CloudConfigValues = Omit<CloudConfigRow, 'id'>;

const SUMMARY = 'id, name, description, size, sha256, updated_by, updated_at';

/** The tables of server keys and cloud configs (migration 0017). */
export function createProvisioningRepo(db: Db) {
  const s = {
    keys: db.prepare<[], ServerKeyRow>('SELECT * FROM server_keys ORDER BY name COLLATE NOCASE, id'),
    key: db.prepare<[number], ServerKeyRow>('SELECT * FROM server_keys WHERE id = ?'),
    insertKey: db.prepare<[string, string, number, string, string, string, string, string], { id: number }>(
      'INSERT INTO server_keys (name, type, bits, fingerprint, comment, public_key, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id',
    ),
    deleteKey: db.prepare<[number]>('DELETE FROM server_keys WHERE id = ?'),
    configs: db.prepare<[], Omit<CloudConfigRow, 'body'>>(`SELECT ${SUMMARY} FROM cloud_configs ORDER BY name COLLATE NOCASE, id`),
    config: db.prepare<[number], CloudConfigRow>('SELECT * FROM cloud_configs WHERE id = ?'),
    insertConfig: db.prepare<[string, string, string, number, string, string, string], { id: number }>(
      'INSERT INTO cloud_configs (name, description, body, size, sha256, updated_by, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id',
    ),
    updateConfig: db.prepare<[string, string, string, number, string, string, string, number]>(
      'UPDATE cloud_configs SET name = ?, description = ?, body = ?, size = ?, sha256 = ?, updated_by = ?, updated_at = ? WHERE id = ?',
    ),
    deleteConfig: db.prepare<[number]>('DELETE FROM cloud_configs WHERE id = ?'),
  };
  return {
    keys: () => s.keys.all(),
    key: (id: number) => s.key.get(id),
    /** Throws SQLITE_CONSTRAINT_UNIQUE when the fingerprint is saved already. */
    insertKey: (k: Omit<ServerKeyRow, 'id'>) => s.insertKey.get(k.name, k.type, k.bits, k.fingerprint, k.comment, k.public_key, k.created_by, k.created_at)!.id,
    deleteKey: (id: number) => s.deleteKey.run(id).changes > 0,
    configs: () => s.configs.all(),
    config: (id: number) => s.config.get(id),
    /** Throws SQLITE_CONSTRAINT_UNIQUE when the name (in any case) is taken. */
    insertConfig: (c: CloudConfigValues) => s.insertConfig.get(c.name, c.description, c.body, c.size, c.sha256, c.updated_by, c.updated_at)!.id,
    updateConfig: (id: number, c: CloudConfigValues) => s.updateConfig.run(c.name, c.description, c.body, c.size, c.sha256, c.updated_by, c.updated_at, id),
    deleteConfig: (id: number) => s.deleteConfig.run(id).changes > 0,
  };
}

export type ProvisioningRepo = ReturnType<typeof createProvisioningRepo>;
