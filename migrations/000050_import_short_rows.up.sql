-- imports.short_rows: records of the file that stopped before the header's
-- last column, missing only columns the format does without, which were
-- read as empty. A tool that drops a row's trailing empty cells (an export
-- re-saved by a spreadsheet or a script) writes them; the import says how
-- many, so that a file cut short is not mistaken for a whole one (see
-- docs/import-formats.md, "Files").

ALTER TABLE imports ADD COLUMN IF NOT EXISTS short_rows bigint NOT NULL DEFAULT 0;
