-- Back to the names as the files wrote them, and the rollup rebuilt from
-- charges in each org's time zone (renamed rows were merged into others
-- there, which cannot be undone row by row). Budget scopes keep the
-- canonical names.
UPDATE charges SET provider_name = x_provider_raw WHERE x_provider_raw <> '';
UPDATE charges SET service_name = x_service_raw WHERE x_service_raw <> '';

DELETE FROM daily_spend;
INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
    gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)
SELECT c.org_id, (c.charge_period_start AT TIME ZONE o.time_zone)::date, c.source, c.provider_name, c.service_name,
    c.sub_account_id, c.team, c.x_model, c.charge_category, c.x_gpu_type, c.billing_currency,
    sum(c.billed_cost), sum(c.effective_cost), sum(c.x_gpu_hours), sum(c.x_input_tokens), sum(c.x_output_tokens),
    sum(c.x_cached_tokens), sum(c.x_requests), count(*)
FROM charges c JOIN orgs o ON o.id = c.org_id
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11;

ALTER TABLE charges DROP COLUMN x_provider_raw, DROP COLUMN x_service_raw;
ALTER TABLE imports DROP COLUMN merged_rows;
