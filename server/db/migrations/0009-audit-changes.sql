-- The change log's own fields (issue 26): what was changed, named as it was then, the change in
-- words, field by field before and after, and the request that made it. Older rows keep NULLs and
-- an empty list: the dashboard words those from their action and detail as before.
ALTER TABLE audit_log ADD COLUMN subject_type TEXT;
ALTER TABLE audit_log ADD COLUMN subject_id TEXT;
ALTER TABLE audit_log ADD COLUMN subject_name TEXT;
ALTER TABLE audit_log ADD COLUMN summary TEXT;
ALTER TABLE audit_log ADD COLUMN changes TEXT NOT NULL DEFAULT '[]';
ALTER TABLE audit_log ADD COLUMN request_id TEXT;
