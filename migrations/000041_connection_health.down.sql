DELETE FROM deliveries WHERE kind = 'connection';
ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('budget_alert', 'digest', 'test'));
ALTER TABLE connections DROP COLUMN notice_since;
ALTER TABLE connections DROP COLUMN notice;
ALTER TABLE connections DROP COLUMN last_fix;
ALTER TABLE connections DROP COLUMN failures;
ALTER TABLE connections DROP COLUMN failing_since;
