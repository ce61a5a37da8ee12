-- PRODUCT.md "Deploy, rebuild and server keys": operations of type `deploy` (a deploy, or with action
-- `rebuild` a rebuild), and the deploy spec kept with the new guest's registry instance. The types
-- `download` and `upload` of "Host storage, downloads and the file cache" are allowed here too, so
-- that the table is copied once.
-- SQLite cannot change a CHECK: the table is copied into one that takes the new type.
CREATE TABLE operations_new (
  id TEXT PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  type TEXT NOT NULL CHECK (type IN ('guest.action', 'logs', 'upgrade', 'uninstall', 'deploy', 'download', 'upload')),
  vmid INTEGER,
  action TEXT,
  params TEXT NOT NULL DEFAULT '{}',
  reason TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'succeeded', 'failed', 'expired', 'cancelled')),
  requested_by TEXT,
  requested_at INTEGER NOT NULL,
  sent_at INTEGER,
  result_due_at INTEGER,
  finished_at INTEGER,
  exit_code INTEGER,
  output TEXT,
  receipt_hash TEXT UNIQUE,
  receipt_expires_at INTEGER,
  forced INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1))
) STRICT;

INSERT INTO operations_new SELECT id, host_id, type, vmid, action, params, reason, status, requested_by, requested_at, sent_at,
  result_due_at, finished_at, exit_code, output, receipt_hash, receipt_expires_at, forced FROM operations;
DROP TABLE operations;
ALTER TABLE operations_new RENAME TO operations;

CREATE INDEX operations_host ON operations (host_id, type, requested_at);
CREATE INDEX operations_requested ON operations (requested_at);
CREATE INDEX operations_open ON operations (status, type) WHERE status IN ('pending', 'sent');
-- One unfinished action or deploy per guest (a deploy's vmid is the guest it makes), whatever requests race.
CREATE UNIQUE INDEX operations_one_per_guest ON operations (host_id, vmid) WHERE type IN ('guest.action', 'deploy') AND status IN ('pending', 'sent');

-- How a guest was deployed (the deploy's fields as JSON: key and config ids, never their text), for
-- rebuilds. It belongs to the instance row, so it follows a vmid change and goes when the instance does.
CREATE TABLE instance_deploys (
  instance_id INTEGER PRIMARY KEY REFERENCES instances (id) ON DELETE CASCADE,
  spec TEXT NOT NULL,
  deployed_at TEXT NOT NULL,
  deployed_by TEXT NOT NULL
) STRICT;
