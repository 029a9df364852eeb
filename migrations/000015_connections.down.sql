-- Drops the connections and their sealed credentials. What they imported
-- stays, in imports and charges, like any upload.
DROP TABLE IF EXISTS connections;
