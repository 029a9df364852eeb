-- The digest waits for yesterday's data (docs/digest.md, "Waiting for
-- yesterday's data"): from its send hour until wait_until_hour (the org's
-- local hour, 0-23), it goes out as soon as every source has delivered the
-- whole day; at wait_until_hour it goes out anyway, naming what is
-- missing. An hour at or before send_hour means no waiting.
ALTER TABLE digest_settings ADD COLUMN wait_until_hour smallint NOT NULL DEFAULT 12
    CHECK (wait_until_hour BETWEEN 0 AND 23);
