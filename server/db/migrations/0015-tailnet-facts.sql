-- What tailscale_sync learns of an instance's tailnet device beyond `tailscale_ip`, which stays IPv4 as
-- the registry specification has it: the device's IPv6 tailnet address. A read-only fact beside the
-- registry (as `host` and `guest_status` are): not in the backup, never in history, not settable
-- through the API. A row exists only while the last run matched a device that has one.
-- Keyed by the instance's vmid, and bound to it: it goes when the instance does (a delete, an import)
-- and follows a renumbering, so a vmid used again never shows the address of the instance it replaced.
CREATE TABLE tailnet_facts (
  vmid INTEGER PRIMARY KEY REFERENCES instances (vmid) ON DELETE CASCADE ON UPDATE CASCADE,
  ipv6 TEXT NOT NULL
) STRICT;
