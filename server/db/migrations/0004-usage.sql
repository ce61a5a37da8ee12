-- Usage reports of provisioning scripts (part B): one row per install, keyed by the script's
-- random_id; the start report creates it as `installing`, the status update sets status and error.
CREATE TABLE usage_reports (
  id INTEGER PRIMARY KEY,
  random_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL CHECK (type IN ('lxc', 'vm')),
  ct_type INTEGER,
  disk_size REAL,
  core_count REAL,
  ram_size REAL,
  os_type TEXT NOT NULL,
  os_version TEXT NOT NULL,
  disableip6 TEXT NOT NULL,
  nsapp TEXT NOT NULL,
  method TEXT NOT NULL,
  pve_version TEXT NOT NULL,
  status TEXT NOT NULL,
  error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE INDEX usage_reports_nsapp ON usage_reports (nsapp);
CREATE INDEX usage_reports_status ON usage_reports (status);
