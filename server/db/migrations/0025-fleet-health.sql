-- PRODUCT.md "Fleet health: policies across every source": the backup jobs and the newest backups of
-- each guest as each host's agent last reported them (POST /api/agent/backups replaces a host's whole
-- report), and the policies the fleet is checked against.

-- A host's copy of the cluster's backup jobs (`pvesh get /cluster/backup`): every node of a cluster
-- reports the same jobs, and a guest is checked against the jobs its own host reported.
CREATE TABLE fleet_backup_jobs (
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  job_id TEXT NOT NULL,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  schedule TEXT NOT NULL,
  -- 'all', or a JSON array of vmids.
  vmids TEXT NOT NULL,
  -- JSON array of vmids left out of an 'all' job.
  exclude TEXT NOT NULL,
  storage TEXT,
  PRIMARY KEY (host_id, job_id)
) STRICT, WITHOUT ROWID;

-- Backup volumes (newest first per guest) on the host's storages that hold backups. A storage shared
-- by several nodes is listed by each of them: the same volid from several hosts is one backup.
CREATE TABLE fleet_backups (
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  volid TEXT NOT NULL,
  vmid INTEGER NOT NULL,
  ctime INTEGER NOT NULL,
  size INTEGER NOT NULL,
  storage TEXT NOT NULL,
  protected INTEGER NOT NULL CHECK (protected IN (0, 1)),
  verified TEXT CHECK (verified IN ('ok', 'failed')),
  PRIMARY KEY (host_id, volid)
) STRICT, WITHOUT ROWID;
CREATE INDEX fleet_backups_by_vmid ON fleet_backups (vmid, ctime DESC);

-- When each host last reported its backups (a host that never did cannot tell a guest has none).
CREATE TABLE fleet_backup_reports (
  host_id INTEGER PRIMARY KEY REFERENCES hosts (id),
  reported_at INTEGER NOT NULL
) STRICT;

-- The policies, as one JSON list [{scope, checks}] replaced whole by PUT /api/policies. The default
-- (PRODUCT.md): production instances running, in an enabled backup job, backed up within 26 hours.
CREATE TABLE fleet_policies (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  policies TEXT NOT NULL
) STRICT;
INSERT INTO fleet_policies (id, policies) VALUES
  (1, '[{"scope":{"stack":"production"},"checks":{"running":true,"in_backup_job":true,"backed_up_within_h":26}}]');
