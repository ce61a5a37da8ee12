-- When the account's password was last set (a change, a reset, the recovery command): the passkeys added
-- since are listed at the next password change, so one added with a stolen session is seen and removed.
-- NULL for accounts from before this column: their password counts as set when the account was made.
ALTER TABLE accounts ADD COLUMN password_changed_at TEXT;
