-- PRODUCT.md "Host storage, downloads and the file cache": each host's storages as its last heartbeat
-- listed them, and the volumes (of content iso, vztmpl, snippets, import) its agent last sent for each,
-- with when. A storage the heartbeat no longer lists goes, and its volumes with it.
ALTER TABLE hosts ADD COLUMN storage_sha256 TEXT;

CREATE TABLE host_storages (
  id INTEGER PRIMARY KEY,
  host_id INTEGER NOT NULL REFERENCES hosts (id),
  storage TEXT NOT NULL,
  type TEXT NOT NULL,
  -- JSON array of content types, as reported.
  content TEXT NOT NULL,
  avail INTEGER,
  total INTEGER,
  active INTEGER NOT NULL CHECK (active IN (0, 1)),
  shared INTEGER NOT NULL CHECK (shared IN (0, 1)),
  -- JSON array of {volid, format, size, ctime} by volid, as the agent last sent them: always read and
  -- replaced whole, so one value (10,000 volumes are one write of a few MiB, not 10,000 rows).
  volumes TEXT NOT NULL DEFAULT '[]',
  volumes_at INTEGER,
  UNIQUE (host_id, storage)
) STRICT;
