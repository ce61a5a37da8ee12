-- Personal API tokens (hfp_…) for scripts: only the SHA-256 of a token is stored; the token is shown once.
-- `role` is the role chosen at creation; a request gets the lower of it and the owner's current role.
-- Times compared on every request are integer milliseconds; created_at is ISO text like other rows.
CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('viewer', 'operator', 'administrator')),
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  expires_at INTEGER,
  last_used_at INTEGER,
  last_used_ip TEXT
) STRICT;

CREATE INDEX api_tokens_account ON api_tokens (account_id);
