-- Server keys (SSH public keys an administrator saved) and cloud configs (cloud-init user-data), which
-- deploy and rebuild name by id. AUTOINCREMENT: a deleted row's id is never handed out again, so a
-- deploy spec that names a deleted key or config finds nothing rather than another one.
CREATE TABLE server_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  bits INTEGER NOT NULL,
  -- SHA256:<base64> of the key's wire form: the same key material is saved once, whatever its comment.
  fingerprint TEXT NOT NULL UNIQUE,
  comment TEXT NOT NULL,
  -- The canonical public key line (type, base64, comment): never anything private.
  public_key TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;

CREATE TABLE cloud_configs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  updated_by TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;
