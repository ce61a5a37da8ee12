-- When the account's password was last set (a change, a reset, the recovery command), and when the one
-- before it was: passkeys added since the previous password was set are marked for review, so one added
-- with a stolen session is seen after the password change that ended that session, and removed.
-- NULL for accounts from before these columns: their password counts as set when the account was made.
ALTER TABLE accounts ADD COLUMN password_changed_at TEXT;
ALTER TABLE accounts ADD COLUMN previous_password_changed_at TEXT;
