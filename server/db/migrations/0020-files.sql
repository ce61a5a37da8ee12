-- PRODUCT.md "Host storage, downloads and the file cache": the uploaded files kept in <data folder>/files/,
-- each stored once under its SHA-256 (the same bytes uploaded twice are one row and one file). used_at
-- (ms) orders eviction: the least recently used file goes first when an upload needs the room.
CREATE TABLE files (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  size INTEGER NOT NULL CHECK (size >= 0),
  sha256 TEXT NOT NULL UNIQUE,
  uploaded_by TEXT NOT NULL,
  uploaded_at TEXT NOT NULL,
  used_at INTEGER NOT NULL
) STRICT;

CREATE INDEX files_used ON files (used_at, id);
