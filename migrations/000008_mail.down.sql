-- Drops the outbox, with the record of every email sent, and every password
-- reset link. Mail jobs still queued find no message and end.
DROP TABLE IF EXISTS password_resets, outbox;
