-- An import a person removed (docs/import-formats.md, "Removing an
-- import"): its charges are gone, but it stays in the history as
-- 'removed', with when and by whom, and its rows still count towards the
-- month's plan quota (an upload removed and uploaded again is imported
-- twice). Only succeeded imports are kept so; a failed one is deleted.
ALTER TABLE imports DROP CONSTRAINT imports_status_check;
ALTER TABLE imports ADD CONSTRAINT imports_status_check
    CHECK (status IN ('processing', 'succeeded', 'failed', 'removed'));
ALTER TABLE imports ADD COLUMN removed_at timestamptz;
ALTER TABLE imports ADD COLUMN removed_by bigint REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE imports ADD COLUMN removed_via text NOT NULL DEFAULT ''; -- web, api, cli
