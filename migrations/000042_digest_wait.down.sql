ALTER TABLE digest_settings DROP COLUMN wait_until_hour;
