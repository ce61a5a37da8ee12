import type { DeployFields, DeploySpec } from '../contract/provisioning.js';
import type { Db } from '../db/database.js';

/**
 * How homefleet deployed an instance's guest (migration 0018), kept beside the instance row for
 * rebuilds: it follows a vmid change and goes with the instance. Never in history or the backup.
 */
export function createDeploySpecs(db: Db) {
  const byVmid = db.prepare<[number], { spec: string; deployed_at: string; deployed_by: string }>(
    'SELECT d.spec, d.deployed_at, d.deployed_by FROM instance_deploys d JOIN instances i ON i.id = d.instance_id WHERE i.vmid = ?',
  );
  const keep = db.prepare<[string, string, string, number]>(
    `INSERT INTO instance_deploys (instance_id, spec, deployed_at, deployed_by) SELECT id, ?, ?, ? FROM instances WHERE vmid = ?
     ON CONFLICT (instance_id) DO UPDATE SET spec = excluded.spec, deployed_at = excluded.deployed_at, deployed_by = excluded.deployed_by`,
  );
  return {
    get(vmid: number): DeploySpec | null {
      const row = byVmid.get(vmid);
      return row ? { ...(JSON.parse(row.spec) as DeployFields), deployed_at: row.deployed_at, deployed_by: row.deployed_by } : null;
    },
    /** Keeps (or replaces) the spec of the instance with this vmid; false when there is none. */
    keep: (vmid: number, fields: DeployFields, at: string, by: string): boolean => keep.run(JSON.stringify(fields), at, by, vmid).changes > 0,
  };
}
