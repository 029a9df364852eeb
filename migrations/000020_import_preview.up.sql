-- A failed import of a file in no known format keeps the file's header and
-- first rows (at most 5 rows of 200 columns of 80 characters), so that the
-- column mapping page can offer its columns to pick from. Nothing else of a
-- file is kept. The table's row-level security fences it to its org like
-- the rest of the row. See docs/import-formats.md, generic.
ALTER TABLE imports ADD COLUMN preview jsonb;
