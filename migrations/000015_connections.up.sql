-- Connections: an org's provider APIs and export buckets, pulled on a
-- schedule into the same import path as an upload (docs/connections.md).
--
-- settings holds what is not secret (start date, bucket, prefix, region,
-- endpoint) as a JSON object. secret holds the credentials sealed with
-- AES-256-GCM under the server's SECRET_KEY ("v1.<key id>.<base64>"); it is
-- never sent back to a browser or a script, and secret_hint (the last four
-- characters of the key, say) is what pages show instead. state is what the
-- puller remembers between runs: the day the last window reached, and the
-- manifest version imported for each billing period of a bucket.
--
-- next_run_at is when the scheduler next enqueues a sync; the last_* columns
-- describe the last run for the Connections page.

CREATE TABLE connections (
    org_id      bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    name        text NOT NULL CHECK (name <> '' AND length(name) <= 80),
    kind        text NOT NULL CHECK (kind IN ('openai', 'anthropic', 'aws-s3')),
    settings    jsonb NOT NULL DEFAULT '{}',
    secret      text NOT NULL,
    secret_hint text NOT NULL DEFAULT '',
    state       jsonb NOT NULL DEFAULT '{}',
    paused      boolean NOT NULL DEFAULT false,
    created_by  bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    next_run_at timestamptz NOT NULL DEFAULT now(),
    last_run_at timestamptz,
    last_status text NOT NULL DEFAULT '' CHECK (last_status IN ('', 'ok', 'failed')),
    last_error  text NOT NULL DEFAULT '',
    last_rows   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX connections_org_name_key ON connections (org_id, lower(name));

GRANT SELECT, INSERT, UPDATE, DELETE ON connections TO burnrate_app;

ALTER TABLE connections ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON connections TO burnrate_app USING (org_id = burnrate_org_id());
