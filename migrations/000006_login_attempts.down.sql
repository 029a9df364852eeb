-- Drops the ids of log-in attempts; the failures themselves stay.
ALTER TABLE login_failures DROP COLUMN IF EXISTS id;
