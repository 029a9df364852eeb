-- Removed imports have no charges left; without the status they are
-- dropped from the history (and from the month's quota count).
DELETE FROM imports WHERE status = 'removed';
ALTER TABLE imports DROP COLUMN removed_via;
ALTER TABLE imports DROP COLUMN removed_by;
ALTER TABLE imports DROP COLUMN removed_at;
ALTER TABLE imports DROP CONSTRAINT imports_status_check;
ALTER TABLE imports ADD CONSTRAINT imports_status_check
    CHECK (status IN ('processing', 'succeeded', 'failed'));
