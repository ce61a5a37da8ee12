-- One change log (issue 35). Entries name what kind of actor made them; an instance's history rows
-- name the entry they are part of, so an instance edit's field changes are written once (in
-- history) and the log reads them from there.
ALTER TABLE audit_log ADD COLUMN actor_type TEXT;
ALTER TABLE instance_history ADD COLUMN change_id INTEGER;
CREATE INDEX instance_history_change ON instance_history (change_id) WHERE change_id IS NOT NULL;
