-- Metrics, alerts and notifications (PRODUCT.md "Metrics, alerts and notifications").

-- Metric buckets of one host (all its subjects: the host and each guest) at one resolution. `key`
-- packs (host_id, tier, t) into the rowid, so a heartbeat's upsert and a chart's range read walk one
-- b-tree: key = (host_id * 4 + tier) * 2^34 + t, tier 0 = 60 s, 1 = 900 s, 2 = 21600 s, t the
-- bucket's start in Unix seconds (server/metrics/keys.ts). `data` is a frame (server/metrics/frame.ts).
CREATE TABLE metric_buckets (
  key INTEGER PRIMARY KEY,
  data BLOB NOT NULL
) STRICT;

-- Sealed spans of buckets, compressed (server/metrics/chunk.ts); key as above with t the span's start.
CREATE TABLE metric_chunks (
  key INTEGER PRIMARY KEY,
  data BLOB NOT NULL
) STRICT;

-- How far each host's coarser tiers have been rolled up: buckets before done_until (Unix seconds) exist.
CREATE TABLE metric_rollups (
  host_id INTEGER NOT NULL,
  tier INTEGER NOT NULL CHECK (tier IN (1, 2)),
  done_until INTEGER NOT NULL,
  PRIMARY KEY (host_id, tier)
) STRICT, WITHOUT ROWID;

-- An administrator's settings of a built-in rule (JSON: enabled, severity, for_s, thresholds); absent = defaults.
CREATE TABLE alert_rules (
  rule TEXT PRIMARY KEY,
  settings TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE alerts (
  id INTEGER PRIMARY KEY,
  rule TEXT NOT NULL,
  severity TEXT NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  subject_type TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  subject_name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('firing', 'resolved')),
  started_at INTEGER NOT NULL,
  resolved_at INTEGER,
  value REAL,
  message TEXT NOT NULL
) STRICT;

-- "An alert fires once per rule and subject": a second firing row cannot exist.
CREATE UNIQUE INDEX alerts_one_firing ON alerts (rule, subject_type, subject_id) WHERE status = 'firing';
CREATE INDEX alerts_by_status ON alerts (status, id);

-- Conditions that hold but not yet for the rule's for_s, with the time they began (kept across restarts).
CREATE TABLE alert_conditions (
  rule TEXT NOT NULL,
  subject_type TEXT NOT NULL,
  subject_id TEXT NOT NULL,
  since INTEGER NOT NULL,
  PRIMARY KEY (rule, subject_type, subject_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE notification_channels (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('webhook', 'ntfy', 'gotify', 'discord', 'email')),
  -- JSON; holds the secret fields in clear (like job secrets): never sent back, logged or audited.
  config TEXT NOT NULL,
  rules TEXT NOT NULL,
  min_severity TEXT NOT NULL CHECK (min_severity IN ('info', 'warning', 'critical')),
  quiet_hours TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- The delivery queue and its log in one: `pending` rows are due at next_attempt_at, so a restart loses none.
CREATE TABLE notification_deliveries (
  id INTEGER PRIMARY KEY,
  channel_id INTEGER REFERENCES notification_channels (id) ON DELETE SET NULL,
  channel_name TEXT NOT NULL,
  alert_id INTEGER REFERENCES alerts (id) ON DELETE SET NULL,
  event TEXT NOT NULL CHECK (event IN ('alert.firing', 'alert.resolved', 'test')),
  -- The alert as it was when the notification was made (JSON), so a retry sends the same message.
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'suppressed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at INTEGER NOT NULL,
  next_attempt_at INTEGER,
  finished_at INTEGER
) STRICT;

CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX notification_deliveries_channel ON notification_deliveries (channel_id, id);
