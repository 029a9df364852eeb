ALTER TABLE imports DROP COLUMN connection_id;
DROP TABLE import_extents;
