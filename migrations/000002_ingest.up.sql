-- Ingestion: every uploaded file (imports), its normalised rows (charges),
-- and the per-day rollup the dashboard reads (daily_spend).
--
-- charges is written by COPY in the import's own transaction, so it carries
-- only the indexes imports and rollup rebuilds need. daily_spend is kept in
-- step in the same transaction: the dashboard never scans charges.
-- Partitioning charges by month is left for when volume needs it; every key
-- already leads with org_id.

CREATE TABLE imports (
    org_id        bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    file_name     text NOT NULL,
    sha256        bytea NOT NULL,
    size_bytes    bigint NOT NULL,
    source        text NOT NULL DEFAULT '',
    -- processing: being read; succeeded: committed; failed: nothing written,
    -- error says why (and where).
    status        text NOT NULL CHECK (status IN ('processing', 'succeeded', 'failed')),
    error         text NOT NULL DEFAULT '',
    error_line    integer,
    error_column  text NOT NULL DEFAULT '',
    rows          bigint NOT NULL DEFAULT 0,
    replaced_rows bigint NOT NULL DEFAULT 0,
    skipped_rows  bigint NOT NULL DEFAULT 0,
    period_start  date,
    period_end    date,
    totals        jsonb NOT NULL DEFAULT '{}',
    uploaded_by   bigint REFERENCES users (id) ON DELETE SET NULL,
    via           text NOT NULL DEFAULT 'web',
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    PRIMARY KEY (org_id, id)
);
-- The same file twice is a no-op: found by its hash among the org's
-- successful imports.
CREATE UNIQUE INDEX imports_org_sha256_key ON imports (org_id, sha256) WHERE status = 'succeeded';
CREATE INDEX imports_org_created_idx ON imports (org_id, created_at DESC);

CREATE TABLE charges (
    org_id               bigint NOT NULL,
    import_id            bigint NOT NULL,
    line                 integer NOT NULL, -- the CSV line the row came from
    source               text NOT NULL,
    provider_name        text NOT NULL,
    service_name         text NOT NULL,
    service_category     text NOT NULL,
    sku                  text NOT NULL,
    resource_id          text NOT NULL,
    region_id            text NOT NULL,
    sub_account_id       text NOT NULL,
    charge_category      text NOT NULL,
    charge_period_start  timestamptz NOT NULL,
    charge_period_end    timestamptz NOT NULL,
    billed_cost          numeric NOT NULL,
    effective_cost       numeric NOT NULL,
    list_cost            numeric NOT NULL,
    billing_currency     text NOT NULL,
    consumed_quantity    numeric NOT NULL,
    consumed_unit        text NOT NULL,
    tags                 jsonb,
    team                 text NOT NULL,
    x_instance_type      text NOT NULL, -- p4d.24xlarge, a2-highgpu-8g, Standard_ND96asr_v4
    x_gpu_type           text NOT NULL,
    x_gpu_count          numeric NOT NULL,
    x_gpu_hours          numeric NOT NULL,
    x_model              text NOT NULL,
    x_input_tokens       bigint NOT NULL,
    x_output_tokens      bigint NOT NULL,
    x_cached_tokens      bigint NOT NULL,
    x_requests           bigint NOT NULL,
    x_priced_by_us       boolean NOT NULL,
    billing_account_id   text NOT NULL,
    billing_period_start date,
    dedupe_key           text NOT NULL,
    -- No foreign key to imports: its per-row check would cost COPY a lookup
    -- a row. Rows are written only by the import that owns them (store
    -- WriteCharges), and deleting an import deletes its rows explicitly.
    PRIMARY KEY (org_id, import_id, line)
);
-- Event logs and usage buckets dedupe on their key. Cloud rows have none, so
-- this partial index costs their COPY nothing.
CREATE UNIQUE INDEX charges_dedupe_key ON charges (org_id, source, dedupe_key) WHERE dedupe_key <> '';

-- Which (source, billing account, billing period) slices each import holds:
-- a newer export of a slice replaces the older import's rows of it. Kept
-- per import, not as an index on charges, so that COPY maintains one index
-- fewer on millions of rows.
CREATE TABLE import_periods (
    org_id             bigint NOT NULL,
    import_id          bigint NOT NULL,
    source             text NOT NULL,
    billing_account_id text NOT NULL,
    period_start       date NOT NULL,
    PRIMARY KEY (org_id, source, billing_account_id, period_start, import_id),
    FOREIGN KEY (org_id, import_id) REFERENCES imports (org_id, id) ON DELETE CASCADE
);

CREATE TABLE daily_spend (
    org_id          bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    day             date NOT NULL, -- in the org's time zone
    source          text NOT NULL,
    provider        text NOT NULL,
    service         text NOT NULL,
    sub_account     text NOT NULL,
    team            text NOT NULL,
    model           text NOT NULL,
    charge_category text NOT NULL,
    gpu_type        text NOT NULL,
    currency        text NOT NULL,
    billed          numeric NOT NULL,
    effective       numeric NOT NULL,
    gpu_hours       numeric NOT NULL,
    input_tokens    bigint NOT NULL,
    output_tokens   bigint NOT NULL,
    cached_tokens   bigint NOT NULL,
    requests        bigint NOT NULL,
    rows            bigint NOT NULL,
    PRIMARY KEY (org_id, day, source, provider, service, sub_account, team, model, charge_category, gpu_type, currency)
);

-- The org's saved column mapping for CSVs in no known format ("generic").
CREATE TABLE column_mappings (
    org_id     bigint PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
    mapping    jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE column_mappings ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON column_mappings TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE import_periods ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON import_periods TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE imports ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON imports TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE charges ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON charges TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE daily_spend ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON daily_spend TO burnrate_app USING (org_id = burnrate_org_id());
