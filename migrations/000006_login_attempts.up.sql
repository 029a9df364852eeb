-- Log-in attempts are counted before their password is checked.
--
-- Counting a failure only after a wrong password let concurrent guesses all
-- read the count below the limit before any of them wrote: sixty at once all
-- got to try. Now each attempt, while holding a lock on its keys, checks the
-- count and writes its row in one short transaction; a right password then
-- deletes that row again, by its id.
--
-- 000005 is taken by another branch; this file is numbered 000006 on purpose.

ALTER TABLE login_failures ADD COLUMN IF NOT EXISTS id bigint GENERATED ALWAYS AS IDENTITY;
