-- Re-binding a machine id that is already enrolled takes an enrollment token made for that host
-- (PRODUCT.md: "a machine id already enrolled → 409 unless an administrator allowed re-binding it").
-- NULL: an ordinary token, which only ever enrolls a new machine.
ALTER TABLE enrollment_tokens ADD COLUMN host_id INTEGER REFERENCES hosts (id);

-- The old allowance let any enrollment token re-bind the host, which is the takeover this closes:
-- a pending one is withdrawn (an administrator makes a re-bind token instead). The column stays unread.
UPDATE hosts SET allow_rebind = 0;
