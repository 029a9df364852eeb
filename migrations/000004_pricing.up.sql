-- Pricing: an org's own prices and its saved what-if scenarios.
--
-- gpu_price_overrides and llm_price_overrides hold negotiated rates (or any
-- price an org trusts more than the shipped catalog). They are applied on top
-- of the embedded catalog at read time (pricing.Catalog.WithPrices,
-- pricing.LLMPriceTable.WithOverrides), so a new catalog release never loses
-- them. Prices are numeric USD: per instance-hour for GPUs (as in
-- gpu_prices.csv), per 1M tokens for LLM APIs. A surrogate id per row keeps
-- URLs short; the natural key is unique per org.
--
-- scenarios are named advisor or break-even inputs, stored as the JSON body of
-- POST /api/v1/advise or /api/v1/breakeven, so that a saved scenario is also a
-- ready API request and reopening it recomputes with today's prices.
--

CREATE TABLE IF NOT EXISTS gpu_price_overrides (
    org_id          bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id              bigint GENERATED ALWAYS AS IDENTITY,
    provider        text NOT NULL,           -- lower case, as in the catalog: aws, gcp, azure, lambda, …
    instance_type   text NOT NULL,
    gpu             text NOT NULL DEFAULT '', -- empty: taken from the catalog row
    gpu_count       numeric NOT NULL DEFAULT 0,
    price_on_demand numeric CHECK (price_on_demand > 0), -- USD per instance-hour
    price_spot      numeric CHECK (price_spot > 0),
    note            text NOT NULL DEFAULT '',
    updated_by      bigint REFERENCES users (id) ON DELETE SET NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    CHECK (price_on_demand IS NOT NULL OR price_spot IS NOT NULL)
);
CREATE UNIQUE INDEX IF NOT EXISTS gpu_price_overrides_key ON gpu_price_overrides (org_id, provider, lower(instance_type));

CREATE TABLE IF NOT EXISTS llm_price_overrides (
    org_id                bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id                    bigint GENERATED ALWAYS AS IDENTITY,
    model                 text NOT NULL,
    provider              text NOT NULL DEFAULT '',
    input_per_mtok        numeric NOT NULL CHECK (input_per_mtok >= 0),  -- USD per 1M uncached input tokens
    output_per_mtok       numeric NOT NULL CHECK (output_per_mtok >= 0),
    cached_input_per_mtok numeric CHECK (cached_input_per_mtok >= 0),    -- NULL: cached reads cost the input price
    note                  text NOT NULL DEFAULT '',
    updated_by            bigint REFERENCES users (id) ON DELETE SET NULL,
    updated_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS llm_price_overrides_key ON llm_price_overrides (org_id, lower(model));

CREATE TABLE IF NOT EXISTS scenarios (
    org_id     bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id         bigint GENERATED ALWAYS AS IDENTITY,
    name       text NOT NULL CHECK (name <> ''),
    kind       text NOT NULL CHECK (kind IN ('breakeven', 'advice')),
    inputs     jsonb NOT NULL,
    created_by bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id)
);
CREATE INDEX IF NOT EXISTS scenarios_org_kind_idx ON scenarios (org_id, kind, updated_at DESC);

-- Default privileges from 000001 cover these tables when the same role runs
-- the migrations; granting explicitly keeps them usable if it does not.
GRANT SELECT, INSERT, UPDATE, DELETE ON gpu_price_overrides, llm_price_overrides, scenarios TO burnrate_app;

ALTER TABLE gpu_price_overrides ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON gpu_price_overrides TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE llm_price_overrides ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON llm_price_overrides TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE scenarios ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON scenarios TO burnrate_app USING (org_id = burnrate_org_id());
