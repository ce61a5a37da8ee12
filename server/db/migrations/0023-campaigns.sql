-- PRODUCT.md "Collections, scripts, campaigns and release channels": a campaign runs one step over
-- targets frozen when it is made, in waves. Everything the engine needs to go on after a restart is
-- here: the wave it is in, when the next one may start, and each target's status and operation.
-- Times are ms since the epoch. `actor` is the creator as the change log names actors (JSON): later
-- waves are queued in their name.
CREATE TABLE campaigns (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  target TEXT NOT NULL,
  step TEXT NOT NULL,
  wave_size INTEGER NOT NULL,
  pause_s INTEGER NOT NULL,
  max_failures INTEGER NOT NULL,
  respect_maintenance INTEGER NOT NULL CHECK (respect_maintenance IN (0, 1)),
  window_wait_h REAL NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'paused', 'succeeded', 'failed', 'cancelled')),
  waves INTEGER NOT NULL,
  current_wave INTEGER NOT NULL DEFAULT 0,
  next_wave_at INTEGER,
  failures INTEGER NOT NULL DEFAULT 0,
  created_by TEXT,
  actor TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  finished_at INTEGER
) STRICT;

CREATE INDEX campaigns_open ON campaigns (status) WHERE status IN ('running', 'paused');

-- One row per frozen target: a guest (vmid) or a host itself (vmid NULL). wave 0: skipped at creation.
CREATE TABLE campaign_targets (
  campaign_id INTEGER NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  wave INTEGER NOT NULL,
  host_id INTEGER,
  vmid INTEGER,
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'waiting', 'running', 'succeeded', 'failed', 'skipped', 'cancelled')),
  reason TEXT,
  operation_id TEXT,
  waiting_since INTEGER,
  started_at INTEGER,
  finished_at INTEGER,
  PRIMARY KEY (campaign_id, seq)
) STRICT;

-- The engine's look at campaigns whose operations are still out (an ended campaign's last wave too).
CREATE INDEX campaign_targets_running ON campaign_targets (campaign_id) WHERE status = 'running';
CREATE INDEX campaign_targets_operation ON campaign_targets (operation_id) WHERE operation_id IS NOT NULL;
-- "No target run twice": a guest (or a host) is in at most one campaign that has not run it yet.
CREATE UNIQUE INDEX campaign_targets_open ON campaign_targets (host_id, ifnull(vmid, 0)) WHERE status IN ('pending', 'waiting', 'running');
