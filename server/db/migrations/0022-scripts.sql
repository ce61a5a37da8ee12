-- PRODUCT.md "Collections, scripts, campaigns and release channels": scripts, the last 20 versions of
-- each, operations of type `script`, and what a host's agent says of scripts on the host itself.
-- SQLite cannot change a CHECK: the operations table is copied into one that takes the new type.
CREATE TABLE operations_new (
  id TEXT PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  type TEXT NOT NULL CHECK (type IN ('guest.action', 'logs', 'upgrade', 'uninstall', 'deploy', 'download', 'upload', 'script')),
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
-- One unfinished action, deploy or script per guest, whatever requests race. A script on the host
-- itself has no vmid: NULLs never collide, so it is not held to this.
CREATE UNIQUE INDEX operations_one_per_guest ON operations (host_id, vmid) WHERE type IN ('guest.action', 'deploy', 'script') AND status IN ('pending', 'sent');

-- AUTOINCREMENT: a campaign (or an operation's params) that names a deleted script finds nothing
-- rather than a later one. `version` is the number of the script's newest version.
CREATE TABLE scripts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  description TEXT NOT NULL,
  runs_on TEXT NOT NULL CHECK (runs_on IN ('host', 'guest')),
  interpreter TEXT NOT NULL CHECK (interpreter IN ('bash', 'sh', 'python3')),
  body TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  version INTEGER NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

-- Each body a script had, numbered from 1; the last 20 are kept.
CREATE TABLE script_versions (
  script_id INTEGER NOT NULL REFERENCES scripts (id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  body TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (script_id, version)
) STRICT;

-- "on the host only when the host was installed with --allow-scripts": as its heartbeats report it.
ALTER TABLE hosts ADD COLUMN allows_scripts INTEGER NOT NULL DEFAULT 0 CHECK (allows_scripts IN (0, 1));
