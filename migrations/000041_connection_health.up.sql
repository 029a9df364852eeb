-- A connection's failure streak and the notices about it
-- (docs/connections.md, "When a connection fails").
--
-- failing_since is the first failed run of the current streak of failed
-- runs (null after a run that succeeded), failures how many runs the
-- streak has, last_fix what a person should do about the last error, in
-- their words ("paste a new admin key"). notice is the problem the org's
-- admins were last told of ('failing' or 'stalled', '' for none) and
-- notice_since when that problem began: the key of the notice, so that a
-- streak is told once, and its recovery once. deliveries gains the kind
-- 'connection' for those notices.
ALTER TABLE connections ADD COLUMN failing_since timestamptz;
ALTER TABLE connections ADD COLUMN failures integer NOT NULL DEFAULT 0;
ALTER TABLE connections ADD COLUMN last_fix text NOT NULL DEFAULT '';
ALTER TABLE connections ADD COLUMN notice text NOT NULL DEFAULT '' CHECK (notice IN ('', 'failing', 'stalled'));
ALTER TABLE connections ADD COLUMN notice_since timestamptz;
UPDATE connections SET failing_since = last_run_at, failures = 1 WHERE last_status = 'failed';

ALTER TABLE deliveries DROP CONSTRAINT deliveries_kind_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind_check CHECK (kind IN ('budget_alert', 'digest', 'test', 'connection'));
