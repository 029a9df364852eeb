-- One provider, one name. Sources spell the same provider their own way
-- ("openai" in a LiteLLM log, "OpenAI" in OpenAI's export, "Microsoft" in an
-- Azure FOCUS file), so the dashboard showed one provider as several. Imports
-- now store the canonical name (ingest.CanonicalProvider, the same table as
-- below) and keep the file's spelling in x_provider_raw when it differs;
-- likewise AWS product codes ("AmazonEC2") become the product names other
-- rows use, keeping the code in x_service_raw. This renames the rows already
-- stored, in charges and in the daily_spend rollup (merging rollup rows that
-- now share a key), and budget scopes naming a provider or service the old
-- way, so that a budget on "openai" keeps matching.
--
-- imports.merged_rows: lines of a usage-bucket file added into an earlier
-- line of the same bucket (rows of one file sharing a key are parts of one
-- bucket; see docs/import-formats.md).

ALTER TABLE imports ADD COLUMN merged_rows bigint NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN x_provider_raw text NOT NULL DEFAULT '',
    ADD COLUMN x_service_raw text NOT NULL DEFAULT '';

-- Spellings as ingest folds them: lower case, trimmed, _ and - as spaces.
CREATE TEMP TABLE provider_names (raw text PRIMARY KEY, name text NOT NULL);
INSERT INTO provider_names (raw, name) VALUES
    ('aws', 'AWS'),
    ('amazon', 'AWS'),
    ('amazon web services', 'AWS'),
    ('amazon aws', 'AWS'),
    ('amazon web services inc', 'AWS'),
    ('bedrock', 'AWS'),
    ('aws bedrock', 'AWS'),
    ('amazon bedrock', 'AWS'),
    ('bedrock converse', 'AWS'),
    ('sagemaker', 'AWS'),
    ('google cloud', 'Google Cloud'),
    ('gcp', 'Google Cloud'),
    ('google', 'Google Cloud'),
    ('google cloud platform', 'Google Cloud'),
    ('vertex ai', 'Google Cloud'),
    ('vertex ai beta', 'Google Cloud'),
    ('vertexai', 'Google Cloud'),
    ('gemini', 'Google Cloud'),
    ('microsoft azure', 'Microsoft Azure'),
    ('microsoft', 'Microsoft Azure'),
    ('azure', 'Microsoft Azure'),
    ('azure ai', 'Microsoft Azure'),
    ('azure openai', 'Microsoft Azure'),
    ('azure text', 'Microsoft Azure'),
    ('oracle cloud', 'Oracle Cloud'),
    ('oracle', 'Oracle Cloud'),
    ('oci', 'Oracle Cloud'),
    ('oracle cloud infrastructure', 'Oracle Cloud'),
    ('openai', 'OpenAI'),
    ('open ai', 'OpenAI'),
    ('text completion openai', 'OpenAI'),
    ('anthropic', 'Anthropic'),
    ('openrouter', 'OpenRouter'),
    ('open router', 'OpenRouter'),
    ('litellm', 'LiteLLM'),
    ('mistral', 'Mistral AI'),
    ('mistral ai', 'Mistral AI'),
    ('mistralai', 'Mistral AI'),
    ('cohere', 'Cohere'),
    ('cohere chat', 'Cohere'),
    ('groq', 'Groq'),
    ('together ai', 'Together AI'),
    ('togetherai', 'Together AI'),
    ('together', 'Together AI'),
    ('fireworks ai', 'Fireworks AI'),
    ('fireworks', 'Fireworks AI'),
    ('deepseek', 'DeepSeek'),
    ('xai', 'xAI'),
    ('x ai', 'xAI'),
    ('perplexity', 'Perplexity'),
    ('huggingface', 'Hugging Face'),
    ('hugging face', 'Hugging Face'),
    ('replicate', 'Replicate'),
    ('databricks', 'Databricks'),
    ('cloudflare', 'Cloudflare'),
    ('cerebras', 'Cerebras'),
    ('coreweave', 'CoreWeave'),
    ('lambda labs', 'Lambda'),
    ('lambda', 'Lambda');

CREATE TEMP TABLE aws_service_names (code text PRIMARY KEY, name text NOT NULL);
INSERT INTO aws_service_names (code, name) VALUES
    ('AmazonEC2', 'Amazon Elastic Compute Cloud'),
    ('AmazonS3', 'Amazon Simple Storage Service'),
    ('AmazonSageMaker', 'Amazon SageMaker'),
    ('AmazonBedrock', 'Amazon Bedrock'),
    ('AmazonRDS', 'Amazon Relational Database Service'),
    ('AWSLambda', 'AWS Lambda'),
    ('AmazonVPC', 'Amazon Virtual Private Cloud'),
    ('AWSDataTransfer', 'AWS Data Transfer'),
    ('AmazonEKS', 'Amazon Elastic Kubernetes Service'),
    ('AmazonECS', 'Amazon Elastic Container Service'),
    ('AmazonECR', 'Amazon EC2 Container Registry (ECR)'),
    ('AmazonDynamoDB', 'Amazon DynamoDB'),
    ('AmazonCloudFront', 'Amazon CloudFront'),
    ('AmazonRoute53', 'Amazon Route 53'),
    ('AWSELB', 'Elastic Load Balancing'),
    ('AmazonEFS', 'Amazon Elastic File System'),
    ('AmazonFSx', 'Amazon FSx'),
    ('AmazonRedshift', 'Amazon Redshift'),
    ('AmazonElastiCache', 'Amazon ElastiCache'),
    ('AWSGlue', 'AWS Glue'),
    ('AmazonAthena', 'Amazon Athena'),
    ('awskms', 'AWS Key Management Service'),
    ('AWSSecretsManager', 'AWS Secrets Manager'),
    ('AmazonSNS', 'Amazon Simple Notification Service'),
    ('AWSQueueService', 'Amazon Simple Queue Service');

UPDATE charges c SET x_provider_raw = c.provider_name, provider_name = m.name
FROM provider_names m
WHERE lower(translate(btrim(c.provider_name), '_-', '  ')) = m.raw AND c.provider_name <> m.name;

UPDATE charges c SET x_service_raw = c.service_name, service_name = m.name
FROM aws_service_names m
WHERE c.provider_name = 'AWS' AND c.service_name = m.code;

-- daily_spend is keyed by provider and service: renamed rows are taken out
-- and added back under the new name, onto any row already there.
WITH moved AS (
    DELETE FROM daily_spend d USING provider_names m
    WHERE lower(translate(btrim(d.provider), '_-', '  ')) = m.raw AND d.provider <> m.name
    RETURNING d.*, m.name AS new_provider
)
INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
    gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)
SELECT org_id, day, source, new_provider, service, sub_account, team, model, charge_category, gpu_type, currency,
    sum(billed), sum(effective), sum(gpu_hours), sum(input_tokens)::bigint, sum(output_tokens)::bigint,
    sum(cached_tokens)::bigint, sum(requests)::bigint, sum(rows)::bigint
FROM moved
GROUP BY org_id, day, source, new_provider, service, sub_account, team, model, charge_category, gpu_type, currency
ON CONFLICT (org_id, day, source, provider, service, sub_account, team, model, charge_category, gpu_type, currency)
DO UPDATE SET billed = daily_spend.billed + EXCLUDED.billed,
    effective = daily_spend.effective + EXCLUDED.effective,
    gpu_hours = daily_spend.gpu_hours + EXCLUDED.gpu_hours,
    input_tokens = daily_spend.input_tokens + EXCLUDED.input_tokens,
    output_tokens = daily_spend.output_tokens + EXCLUDED.output_tokens,
    cached_tokens = daily_spend.cached_tokens + EXCLUDED.cached_tokens,
    requests = daily_spend.requests + EXCLUDED.requests,
    rows = daily_spend.rows + EXCLUDED.rows;

WITH moved AS (
    DELETE FROM daily_spend d USING aws_service_names m
    WHERE d.provider = 'AWS' AND d.service = m.code
    RETURNING d.*, m.name AS new_service
)
INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
    gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)
SELECT org_id, day, source, provider, new_service, sub_account, team, model, charge_category, gpu_type, currency,
    sum(billed), sum(effective), sum(gpu_hours), sum(input_tokens)::bigint, sum(output_tokens)::bigint,
    sum(cached_tokens)::bigint, sum(requests)::bigint, sum(rows)::bigint
FROM moved
GROUP BY org_id, day, source, provider, new_service, sub_account, team, model, charge_category, gpu_type, currency
ON CONFLICT (org_id, day, source, provider, service, sub_account, team, model, charge_category, gpu_type, currency)
DO UPDATE SET billed = daily_spend.billed + EXCLUDED.billed,
    effective = daily_spend.effective + EXCLUDED.effective,
    gpu_hours = daily_spend.gpu_hours + EXCLUDED.gpu_hours,
    input_tokens = daily_spend.input_tokens + EXCLUDED.input_tokens,
    output_tokens = daily_spend.output_tokens + EXCLUDED.output_tokens,
    cached_tokens = daily_spend.cached_tokens + EXCLUDED.cached_tokens,
    requests = daily_spend.requests + EXCLUDED.requests,
    rows = daily_spend.rows + EXCLUDED.rows;

-- Budget scopes filter daily_spend by exact name.
UPDATE budgets b SET scope = jsonb_set(b.scope, '{provider}', to_jsonb(m.name)), updated_at = now()
FROM provider_names m
WHERE lower(translate(btrim(b.scope->>'provider'), '_-', '  ')) = m.raw AND b.scope->>'provider' <> m.name;

UPDATE budgets b SET scope = jsonb_set(b.scope, '{service}', to_jsonb(m.name)), updated_at = now()
FROM aws_service_names m
WHERE b.scope->>'service' = m.code;

DROP TABLE provider_names;
DROP TABLE aws_service_names;
