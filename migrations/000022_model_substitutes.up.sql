-- model_substitutes: an org's edits of the break-even's tier table (API
-- model → the open model of comparable quality it is compared with, or
-- 'none'), saved so that the page, the API, the CLI and the digest's hint
-- all use them (docs/advisor.md, "Fair break-even"). No row: the shipped
-- table (pricing/data/model_tiers.csv). api_model is kept as
-- pricing.NormalizeLLMModel writes it.
CREATE TABLE model_substitutes (
    org_id     bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    api_model  text NOT NULL CHECK (api_model <> '' AND length(api_model) <= 200),
    open_model text NOT NULL CHECK (open_model <> '' AND length(open_model) <= 200),
    updated_by bigint REFERENCES users (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, api_model)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON model_substitutes TO burnrate_app;
ALTER TABLE model_substitutes ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON model_substitutes TO burnrate_app USING (org_id = burnrate_org_id());
