-- PRODUCT.md "Release channels" and "Plugins": the release channel a host's agent follows, the
-- version it is pinned to (NULL: none), and which of the agent's collectors run on it (all by default).
ALTER TABLE hosts ADD COLUMN agent_channel TEXT NOT NULL DEFAULT 'stable' CHECK (agent_channel IN ('stable', 'beta'));
ALTER TABLE hosts ADD COLUMN agent_pin TEXT;
ALTER TABLE hosts ADD COLUMN collect_metrics INTEGER NOT NULL DEFAULT 1 CHECK (collect_metrics IN (0, 1));
ALTER TABLE hosts ADD COLUMN collect_configs INTEGER NOT NULL DEFAULT 1 CHECK (collect_configs IN (0, 1));
ALTER TABLE hosts ADD COLUMN collect_storage INTEGER NOT NULL DEFAULT 1 CHECK (collect_storage IN (0, 1));
ALTER TABLE hosts ADD COLUMN collect_backups INTEGER NOT NULL DEFAULT 1 CHECK (collect_backups IN (0, 1));
