-- Azure Cost Management exports in a storage container are a kind of
-- connection (docs/connections.md, "What a sync does").
ALTER TABLE connections DROP CONSTRAINT connections_kind_check;
ALTER TABLE connections ADD CONSTRAINT connections_kind_check CHECK (kind IN ('openai', 'anthropic', 'aws-s3', 'azure-blob'));

-- Slack and webhook URLs are credentials (whoever has one can post to the
-- channel) and are sealed like connection credentials: url holds
-- "v1.<key id>.<base64>", AES-256-GCM under SECRET_KEY, and url_masked (the
-- host and the last four characters) is what pages show.
--
-- SQL cannot encrypt under SECRET_KEY, which only the servers hold: this
-- migration cannot seal the rows that are in clear. A server started with
-- SECRET_KEY seals every clear url at start-up, in one transaction
-- (notify.SealChannels), and `burnrate secrets rotate` does the same. Until
-- then a clear url keeps working. This column records, for operators, when
-- a row was sealed; a clear row has none.
ALTER TABLE notification_channels ADD COLUMN sealed_at timestamptz;
