-- llm_hourly: LLM tokens per UTC hour, for the peak-hour factor of
-- break-even and of the digest's cheaper-option hint (docs/advisor.md).
-- They used to group the org's charges on every page view and digest: 6 s
-- for an org of 10M charges. Only what the factor measures counts: rows
-- with a model and a period of at most an hour. The importer writes it
-- as it writes daily_spend, and store's deletes subtract from it
-- (store/llmhourly.go); store.RebuildDailySpend rebuilds it.
CREATE TABLE llm_hourly (
    org_id bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    hour   timestamptz NOT NULL, -- the start of a UTC hour
    tokens bigint NOT NULL,      -- input + output
    rows   bigint NOT NULL,
    PRIMARY KEY (org_id, hour)
);

ALTER TABLE llm_hourly ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, UPDATE, DELETE ON llm_hourly TO burnrate_app;
CREATE POLICY org_fence ON llm_hourly TO burnrate_app USING (org_id = burnrate_org_id());

INSERT INTO llm_hourly (org_id, hour, tokens, rows)
SELECT org_id, date_trunc('hour', charge_period_start, 'UTC'), sum(x_input_tokens + x_output_tokens)::bigint, count(*)
FROM charges
WHERE x_model <> '' AND charge_period_end - charge_period_start <= interval '1 hour'
GROUP BY 1, 2;
