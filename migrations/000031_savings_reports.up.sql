-- Each org's savings report with the default options, as savings.Stored
-- computed it: the digest, the Savings page and the API read it instead of
-- running every finder over 30 days of GPU rollup on each request
-- (docs/savings.md, "The stored report"). inputs names what the report was
-- computed from (window, bills, prices, catalogs, options, format); a
-- report whose inputs no longer match is recomputed, so a stale row is
-- never served.
CREATE TABLE savings_reports (
    org_id      bigint      PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
    inputs      text        NOT NULL,
    report      jsonb       NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE savings_reports ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, UPDATE, DELETE ON savings_reports TO burnrate_app;
CREATE POLICY org_fence ON savings_reports TO burnrate_app USING (org_id = burnrate_org_id());
