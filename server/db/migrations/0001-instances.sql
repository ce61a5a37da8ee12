-- The registry: instances and their per-field history.
-- `id` is the internal row id; it orders insertion and breaks timestamp ties.
CREATE TABLE instances (
  id INTEGER PRIMARY KEY,
  vmid INTEGER NOT NULL UNIQUE CHECK (vmid > 0),
  name TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('deployed', 'testing', 'degraded')),
  stack TEXT NOT NULL CHECK (stack IN ('production', 'development')),
  tailscale_ip TEXT NOT NULL DEFAULT '',
  atlas INTEGER NOT NULL DEFAULT 0 CHECK (atlas IN (0, 1)),
  argus INTEGER NOT NULL DEFAULT 0 CHECK (argus IN (0, 1)),
  semaphore INTEGER NOT NULL DEFAULT 0 CHECK (semaphore IN (0, 1)),
  patchmon INTEGER NOT NULL DEFAULT 0 CHECK (patchmon IN (0, 1)),
  tailscale INTEGER NOT NULL DEFAULT 0 CHECK (tailscale IN (0, 1)),
  andromeda INTEGER NOT NULL DEFAULT 0 CHECK (andromeda IN (0, 1)),
  hardware_acceleration INTEGER NOT NULL DEFAULT 0 CHECK (hardware_acceleration IN (0, 1)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE INDEX instances_name ON instances (name COLLATE NOCASE, id);
CREATE INDEX instances_created ON instances (created_at, id);
CREATE INDEX instances_updated ON instances (updated_at, id);
CREATE INDEX instances_state ON instances (state);
CREATE INDEX instances_stack ON instances (stack);

-- History belongs to the instance row, not to the number, so it follows a vmid change.
CREATE TABLE instance_history (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
  field TEXT NOT NULL,
  old_value TEXT,
  new_value TEXT,
  changed_at TEXT NOT NULL,
  -- who made the change: a username, `job:<key>` for a sync job, `import`; null when unknown
  changed_by TEXT
) STRICT;

CREATE INDEX instance_history_instance ON instance_history (instance_id, changed_at, id);
