-- Hosts and their agents (PRODUCT.md "Hosts and agents"). Tokens are stored only as the SHA-256
-- (hex) of the whole prefixed token; times compared by the server are integer milliseconds.
CREATE TABLE enrollment_tokens (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '',
  token_hash TEXT NOT NULL UNIQUE,
  created_by TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  max_uses INTEGER NOT NULL CHECK (max_uses >= 1),
  uses INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0),
  revoked_at INTEGER
) STRICT;

CREATE TABLE hosts (
  id INTEGER PRIMARY KEY,
  machine_id TEXT NOT NULL,
  hostname TEXT NOT NULL,
  -- active (online/offline is computed from last_heartbeat_at), deleting, deleted (kept for history)
  state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'deleting', 'deleted')),
  enrolled_at INTEGER NOT NULL,
  enrollment_token_id INTEGER REFERENCES enrollment_tokens (id) ON DELETE SET NULL,
  agent_version TEXT NOT NULL,
  agent_started_at INTEGER,
  last_heartbeat_at INTEGER,
  heartbeat_interval_s INTEGER NOT NULL,
  addresses TEXT NOT NULL DEFAULT '[]',
  uptime_s INTEGER,
  hypervisor_version TEXT NOT NULL DEFAULT '',
  -- fingerprint of the last stored guest list: an unchanged list is not rewritten
  guests_hash TEXT NOT NULL DEFAULT '',
  sync_registry INTEGER NOT NULL DEFAULT 0 CHECK (sync_registry IN (0, 1)),
  -- an administrator allowed this machine id to enroll again onto this host (rotating its token)
  allow_rebind INTEGER NOT NULL DEFAULT 0 CHECK (allow_rebind IN (0, 1)),
  deleted_at INTEGER,
  -- upgrade: pending (requested, not yet offered), in_progress (offered at upgrade_started_at), succeeded, failed
  upgrade_state TEXT CHECK (upgrade_state IN ('pending', 'in_progress', 'succeeded', 'failed')),
  upgrade_version TEXT,
  upgrade_from TEXT,
  upgrade_requested_at INTEGER,
  upgrade_started_at INTEGER,
  upgrade_finished_at INTEGER
) STRICT;

-- One enrolled host per machine; a deleted host frees its machine id.
CREATE UNIQUE INDEX hosts_machine_live ON hosts (machine_id) WHERE state != 'deleted';

CREATE TABLE host_tokens (
  id INTEGER PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  token_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT;

CREATE INDEX host_tokens_host ON host_tokens (host_id);

CREATE TABLE host_guests (
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  vmid INTEGER NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('qemu', 'lxc')),
  status TEXT NOT NULL,
  PRIMARY KEY (host_id, vmid)
) STRICT, WITHOUT ROWID;

CREATE INDEX host_guests_vmid ON host_guests (vmid);

-- A deletion: pending until the next heartbeat delivers the uninstall command (then the receipt
-- token exists and the host token is revoked), confirmed by the receipt, or forced by an administrator.
CREATE TABLE host_deletions (
  id TEXT PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'confirmed', 'forced')),
  created_by TEXT,
  created_at INTEGER NOT NULL,
  receipt_hash TEXT UNIQUE,
  receipt_expires_at INTEGER,
  delivered_at INTEGER,
  confirmed_at INTEGER
) STRICT;

CREATE INDEX host_deletions_host ON host_deletions (host_id);
