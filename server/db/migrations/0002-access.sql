-- The access layer: accounts, sessions, persistent throttling, audit, telemetry events.
-- Times that the guard compares on every request are integer milliseconds; times shown to people are ISO text.
CREATE TABLE accounts (
  id INTEGER PRIMARY KEY,
  username TEXT NOT NULL UNIQUE COLLATE NOCASE,
  display_name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'administrator')),
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  must_change_password INTEGER NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
  -- scrypt$N$r$p$salt$hash: the parameters travel with the hash so they can be raised later
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_login_at TEXT
) STRICT;

-- Only the SHA-256 of a session token is stored; the token itself lives in the browser's cookie.
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  last_seen INTEGER NOT NULL
) STRICT;

CREATE INDEX sessions_account ON sessions (account_id);

-- Fixed 15-minute windows of failed attempts per scope (login.ip, login.user, setup.ip, password.account) and key.
CREATE TABLE throttle (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  window_start INTEGER NOT NULL,
  failures INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) STRICT;

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  actor TEXT,
  action TEXT NOT NULL,
  target TEXT,
  ip TEXT,
  detail TEXT NOT NULL DEFAULT '{}'
) STRICT;

CREATE TABLE telemetry_events (
  id INTEGER PRIMARY KEY,
  received_at TEXT NOT NULL,
  payload TEXT NOT NULL
) STRICT;
