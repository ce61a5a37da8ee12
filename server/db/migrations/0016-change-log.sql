-- One change log (issue 35). Entries name what kind of actor made them; an instance's history rows
-- name the entry they are part of, so an instance edit's field changes are written once (in
-- history) and the log reads them from there.
ALTER TABLE audit_log ADD COLUMN actor_type TEXT;
ALTER TABLE instance_history ADD COLUMN change_id INTEGER;
CREATE INDEX instance_history_change ON instance_history (change_id) WHERE change_id IS NOT NULL;

-- Entries written before every entry had a subject and a summary get theirs here, read once from the
-- old `target` ("instance 102", "host:7", a username) and detail, so the dashboard parses nothing.
UPDATE audit_log SET subject_type = 'login', subject_id = COALESCE(target, ''), subject_name = target
 WHERE subject_type IS NULL AND action = 'login.failure';
UPDATE audit_log SET subject_type = 'host', subject_id = substr(target, 6), subject_name = COALESCE(json_extract(detail, '$.host'), CASE WHEN actor LIKE 'agent:%' THEN substr(actor, 7) END)
 WHERE subject_type IS NULL AND target LIKE 'host:%';
UPDATE audit_log SET subject_type = 'enrollment_token', subject_id = substr(target, 18), subject_name = json_extract(detail, '$.name')
 WHERE subject_type IS NULL AND target LIKE 'enrollment_token:%';
UPDATE audit_log SET subject_type = 'api_token', subject_id = COALESCE(CAST(json_extract(detail, '$.id') AS TEXT), ''), subject_name = json_extract(detail, '$.name')
 WHERE subject_type IS NULL AND action IN ('token.create', 'token.revoke');
UPDATE audit_log SET subject_type = 'instance', subject_id = substr(target, 10), subject_name = NULL
 WHERE subject_type IS NULL AND target LIKE 'instance %';
UPDATE audit_log SET subject_type = 'job', subject_id = substr(target, 5), subject_name = json_extract(detail, '$.name')
 WHERE subject_type IS NULL AND target LIKE 'job %';
UPDATE audit_log SET subject_type = 'snapshot', subject_id = substr(target, 10), subject_name = substr(target, 10)
 WHERE subject_type IS NULL AND target LIKE 'snapshot %';
UPDATE audit_log SET subject_type = 'backup', subject_id = 'import', subject_name = NULL
 WHERE subject_type IS NULL AND action = 'request' AND json_extract(detail, '$.path') = '/api/import';
UPDATE audit_log SET subject_type = 'user', subject_id = COALESCE((SELECT CAST(a.id AS TEXT) FROM accounts a WHERE a.username = audit_log.target), target), subject_name = target
 WHERE subject_type IS NULL AND target IS NOT NULL AND action <> 'request';
UPDATE audit_log SET subject_type = 'request', subject_id = COALESCE(json_extract(detail, '$.path'), ''), subject_name = NULL
 WHERE subject_type IS NULL;

UPDATE audit_log SET summary = (
  WITH e AS (SELECT COALESCE(audit_log.actor, 'someone') AS who, COALESCE(audit_log.target, 'an unknown account') AS target,
                    CASE WHEN audit_log.ip IS NULL THEN '' ELSE ' from ' || audit_log.ip END AS origin,
                    COALESCE(audit_log.subject_name, audit_log.subject_id) AS thing,
                    upper(COALESCE(json_extract(audit_log.detail, '$.method'), '?')) AS method,
                    COALESCE(json_extract(audit_log.detail, '$.path'), '?') AS path)
  SELECT CASE audit_log.action
    WHEN 'login.success' THEN COALESCE(audit_log.actor, e.target) || ' signed in' || e.origin
    WHEN 'login.failure' THEN 'login failed for ' || e.target || e.origin
    WHEN 'logout' THEN COALESCE(audit_log.actor, e.target) || ' signed out'
    WHEN 'setup' THEN e.target || ' was created as the first administrator (setup' || e.origin || ')'
    WHEN 'user.create' THEN e.who || ' created user ' || e.target || COALESCE(' (' || json_extract(audit_log.detail, '$.role') || ')', '')
    WHEN 'user.update' THEN e.who || ' changed user ' || e.target || COALESCE(': ' || (SELECT group_concat(key, ', ') FROM json_each(audit_log.detail, '$.changes')), '')
    WHEN 'user.reset_password' THEN e.who || ' reset the password of ' || e.target
    WHEN 'user.revoke_sessions' THEN e.who || ' signed ' || e.target || ' out everywhere'
    WHEN 'password.change' THEN e.target || ' changed their own password'
    WHEN 'recovery' THEN 'the password of ' || e.target || ' was reset with the recovery command'
    WHEN 'token.create' THEN e.who || ' created API token “' || COALESCE(json_extract(audit_log.detail, '$.name'), '?') || '”'
    WHEN 'token.revoke' THEN e.who || ' revoked API token “' || COALESCE(json_extract(audit_log.detail, '$.name'), '?') || '”'
    WHEN 'enrollment_token.create' THEN e.who || ' created a host enrollment token'
    WHEN 'enrollment_token.revoke' THEN e.who || ' revoked a host enrollment token'
    WHEN 'host.enroll' THEN 'host ' || e.thing || ' enrolled' || e.origin
    WHEN 'host.rebind' THEN 'host ' || e.thing || ' enrolled again (re-bound)' || e.origin
    WHEN 'host.update' THEN e.who || ' changed the settings of host ' || e.thing
    WHEN 'host.delete' THEN e.who || ' started removing host ' || e.thing
    WHEN 'host.force_delete' THEN e.who || ' force-removed host ' || e.thing || ' (no receipt)'
    WHEN 'host.deleted' THEN 'host ' || e.thing || ' confirmed its removal'
    WHEN 'host.revoke_token' THEN e.who || ' revoked the token of host ' || e.thing
    WHEN 'host.drift_apply' THEN e.who || ' applied registry drift from host ' || e.thing
    WHEN 'host.upgrade_request' THEN e.who || ' asked host ' || e.thing || ' to upgrade' || COALESCE(' to ' || json_extract(audit_log.detail, '$.version'), '')
    WHEN 'host.upgrade_succeeded' THEN 'host ' || e.thing || ' upgraded' || COALESCE(' to ' || json_extract(audit_log.detail, '$.version'), '')
    WHEN 'host.upgrade_failed' THEN 'the upgrade of host ' || e.thing || ' failed' || COALESCE(': ' || json_extract(audit_log.detail, '$.reason'), '')
    WHEN 'request' THEN CASE
      WHEN e.path = '/api/import' THEN e.who || ' imported a backup, replacing the registry'
      WHEN audit_log.subject_type IN ('instance', 'job') AND e.method = 'POST' AND e.path LIKE '%/run' THEN e.who || ' ran job ' || e.thing || ' now'
      WHEN audit_log.subject_type IN ('instance', 'job') AND e.method = 'POST' THEN e.who || ' created ' || audit_log.subject_type || ' ' || e.thing
      WHEN audit_log.subject_type IN ('instance', 'job') AND e.method IN ('PUT', 'PATCH') THEN e.who || ' changed ' || audit_log.subject_type || ' ' || e.thing
        || COALESCE(': ' || (SELECT group_concat(value, ', ') FROM json_each(audit_log.detail, '$.fields')), '')
      WHEN audit_log.subject_type IN ('instance', 'job') AND e.method = 'DELETE' THEN e.who || ' deleted ' || audit_log.subject_type || ' ' || e.thing
      ELSE e.who || ' sent ' || e.method || ' ' || e.path || COALESCE(' (' || json_extract(audit_log.detail, '$.status') || ')', '')
    END
    ELSE e.who || ': ' || audit_log.action || COALESCE(' ' || audit_log.target, '')
  END FROM e)
 WHERE summary IS NULL;
