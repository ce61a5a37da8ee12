-- Sync jobs and their runs. `config` is a JSON object whose shape depends on `key`.
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE CHECK (key IN ('tailscale_sync', 'patchmon_sync', 'semaphore_sync')),
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  enabled INTEGER NOT NULL DEFAULT 0 CHECK (enabled IN (0, 1)),
  schedule INTEGER NOT NULL DEFAULT 15 CHECK (schedule BETWEEN 1 AND 10080),
  config TEXT NOT NULL DEFAULT '{}'
) STRICT;

CREATE TABLE job_runs (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  status TEXT NOT NULL CHECK (status IN ('running', 'success', 'error')),
  result TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX job_runs_job ON job_runs (job_id, started_at, id);
