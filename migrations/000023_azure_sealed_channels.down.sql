-- Down cannot decrypt: the channel URLs sealed under SECRET_KEY can be
-- opened only by a server holding that key, never by SQL. The version
-- before this one reads url as a clear URL, and would post to
-- "v1.<key id>.…" and fail every delivery. So the sealed channels are
-- deleted here, and an admin has to paste each Slack or webhook URL again
-- after going back (the deliveries already made stay, as history). Clear
-- rows, never sealed, are kept as they are.
DELETE FROM notification_channels WHERE sealed_at IS NOT NULL OR url LIKE 'v1.%';
ALTER TABLE notification_channels DROP COLUMN sealed_at;

-- Azure connections cannot be read by the version before this one.
DELETE FROM connections WHERE kind = 'azure-blob';
ALTER TABLE connections DROP CONSTRAINT connections_kind_check;
ALTER TABLE connections ADD CONSTRAINT connections_kind_check CHECK (kind IN ('openai', 'anthropic', 'aws-s3'));
