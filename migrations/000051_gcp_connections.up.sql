-- A GCP billing export in BigQuery is a kind of connection
-- (docs/connections.md, "GCP"): its service account's key is sealed with
-- the other credentials, and the bytes BigQuery billed for its last pull
-- are kept in its state.
ALTER TABLE connections DROP CONSTRAINT connections_kind_check;
ALTER TABLE connections ADD CONSTRAINT connections_kind_check CHECK (kind IN ('openai', 'anthropic', 'aws-s3', 'azure-blob', 'gcp-bigquery'));
