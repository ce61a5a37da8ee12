-- PRODUCT.md "Collections, scripts, campaigns and release channels": instances carry tags, and
-- collections are saved filters over them.
--
-- An instance's tags, comma-joined and sorted ('' for none): a tag cannot hold a comma, so the text
-- is the list, and it is what history records as the old and new value.
ALTER TABLE instances ADD COLUMN tags TEXT NOT NULL DEFAULT '';

-- A deploy used to keep its tags only in the deploy spec; the instance carries them now, and the
-- spec no longer does (a rebuild keeps the instance, and so its tags).
UPDATE instances SET tags = (
  SELECT group_concat(j.value, ',') FROM instance_deploys d, json_each(d.spec, '$.tags') j WHERE d.instance_id = instances.id
) WHERE id IN (SELECT instance_id FROM instance_deploys WHERE json_array_length(spec, '$.tags') > 0);
UPDATE instance_deploys SET spec = json_remove(spec, '$.tags');

-- A collection keeps its filter (JSON), never its members. Names are unique whatever their case.
CREATE TABLE collections (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  filter TEXT NOT NULL DEFAULT '{}'
) STRICT;

CREATE UNIQUE INDEX collections_name ON collections (name COLLATE NOCASE);
