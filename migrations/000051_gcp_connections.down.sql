DELETE FROM connections WHERE kind = 'gcp-bigquery';
ALTER TABLE connections DROP CONSTRAINT connections_kind_check;
ALTER TABLE connections ADD CONSTRAINT connections_kind_check CHECK (kind IN ('openai', 'anthropic', 'aws-s3', 'azure-blob'));
