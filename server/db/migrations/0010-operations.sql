-- Guest control through agents (PRODUCT.md "Guest control through agents"): one table for every
-- command an agent receives. Host removals (host_deletions) and agent upgrades (the upgrade_* columns
-- of hosts) move into it; guest actions and log requests are new. Times are integer milliseconds.
CREATE TABLE operations (
  id TEXT PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  type TEXT NOT NULL CHECK (type IN ('guest.action', 'logs', 'upgrade', 'uninstall')),
  -- guest actions: the guest and the verb
  vmid INTEGER,
  action TEXT,
  -- the command's own fields as JSON: {name} of a snapshot, {new_vmid, name, full} of a clone,
  -- {version, from} of an upgrade; never a secret
  params TEXT NOT NULL DEFAULT '{}',
  reason TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'succeeded', 'failed', 'expired', 'cancelled')),
  requested_by TEXT,
  requested_at INTEGER NOT NULL,
  sent_at INTEGER,
  -- a sent command with no result by then is expired by the sweep
  result_due_at INTEGER,
  finished_at INTEGER,
  exit_code INTEGER,
  -- the last 4 KiB of what the agent sent
  output TEXT,
  -- an uninstall's receipt token (SHA-256) and its expiry; a removal an administrator forced
  receipt_hash TEXT UNIQUE,
  receipt_expires_at INTEGER,
  forced INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1))
) STRICT;

CREATE INDEX operations_host ON operations (host_id, type, requested_at);
CREATE INDEX operations_requested ON operations (requested_at);
CREATE INDEX operations_open ON operations (status, type) WHERE status IN ('pending', 'sent');
-- "an operation is already pending for this guest": at most one unfinished action per guest, held by
-- the database itself, whatever requests race.
CREATE UNIQUE INDEX operations_one_per_guest ON operations (host_id, vmid) WHERE type = 'guest.action' AND status IN ('pending', 'sent');

INSERT INTO operations (id, host_id, type, status, requested_by, requested_at, sent_at, finished_at, receipt_hash, receipt_expires_at, forced)
SELECT id, host_id, 'uninstall',
       CASE status WHEN 'delivered' THEN 'sent' WHEN 'confirmed' THEN 'succeeded' WHEN 'forced' THEN 'cancelled' ELSE 'pending' END,
       created_by, created_at, delivered_at, confirmed_at, receipt_hash, receipt_expires_at, status = 'forced'
  FROM host_deletions;

INSERT INTO operations (id, host_id, type, params, status, requested_at, sent_at, finished_at)
SELECT lower(hex(randomblob(16))), id, 'upgrade', json_object('version', upgrade_version, 'from', upgrade_from),
       CASE upgrade_state WHEN 'in_progress' THEN 'sent' ELSE upgrade_state END,
       upgrade_requested_at, upgrade_started_at, upgrade_finished_at
  FROM hosts WHERE upgrade_state IS NOT NULL AND upgrade_version IS NOT NULL AND upgrade_requested_at IS NOT NULL;

DROP TABLE host_deletions;
ALTER TABLE hosts DROP COLUMN upgrade_state;
ALTER TABLE hosts DROP COLUMN upgrade_version;
ALTER TABLE hosts DROP COLUMN upgrade_from;
ALTER TABLE hosts DROP COLUMN upgrade_requested_at;
ALTER TABLE hosts DROP COLUMN upgrade_started_at;
ALTER TABLE hosts DROP COLUMN upgrade_finished_at;

-- The SHA-256 of a guest's config as its agent last reported it in a heartbeat.
ALTER TABLE host_guests ADD COLUMN config_sha256 TEXT;

-- Raw guest configs as agents upload them (redacted by the agent), the last 20 per guest.
CREATE TABLE guest_configs (
  id INTEGER PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  vmid INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  text TEXT NOT NULL,
  size INTEGER NOT NULL,
  received_at INTEGER NOT NULL
) STRICT;

CREATE INDEX guest_configs_guest ON guest_configs (host_id, vmid, id);

-- A host's maintenance policy (one row per host; none means no windows, no auto-upgrade, not muted).
-- `windows` is JSON: [{days: ["mon", ...], start: "HH:MM", end: "HH:MM"}] in `timezone` (IANA).
CREATE TABLE host_maintenance (
  host_id INTEGER PRIMARY KEY REFERENCES hosts (id),
  windows TEXT NOT NULL DEFAULT '[]',
  timezone TEXT NOT NULL,
  auto_upgrade INTEGER NOT NULL DEFAULT 0 CHECK (auto_upgrade IN (0, 1)),
  -- the host's alerts are recorded but do not notify
  muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1)),
  updated_by TEXT,
  updated_at INTEGER NOT NULL
) STRICT;
