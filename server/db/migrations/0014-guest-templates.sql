-- PRODUCT.md "Agents on real Proxmox": each heartbeat guest carries `template` and `lock`. A template
-- is never drift; a locked guest refuses actions until a heartbeat without the lock arrives.
ALTER TABLE host_guests ADD COLUMN template INTEGER NOT NULL DEFAULT 0 CHECK (template IN (0, 1));
ALTER TABLE host_guests ADD COLUMN lock TEXT;
