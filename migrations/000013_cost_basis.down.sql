-- One view again: where an Azure period holds both an actual and an
-- amortized import, the amortized one (and its rows) goes, as the older
-- behaviour could not hold both, and the actual rows count in both views.
DELETE FROM charges c USING imports i
WHERE i.org_id = c.org_id AND i.id = c.import_id AND i.cost_basis = 'amortized';
DELETE FROM imports WHERE cost_basis = 'amortized';
UPDATE charges c SET effective_cost = c.billed_cost FROM imports i
WHERE i.org_id = c.org_id AND i.id = c.import_id AND i.cost_basis = 'billed';

DELETE FROM daily_spend;
INSERT INTO daily_spend (org_id, day, source, provider, service, sub_account, team, model, charge_category,
    gpu_type, currency, billed, effective, gpu_hours, input_tokens, output_tokens, cached_tokens, requests, rows)
SELECT c.org_id, (c.charge_period_start AT TIME ZONE o.time_zone)::date, c.source, c.provider_name, c.service_name,
    c.sub_account_id, c.team, c.x_model, c.charge_category, c.x_gpu_type, c.billing_currency,
    sum(c.billed_cost), sum(c.effective_cost), sum(c.x_gpu_hours), sum(c.x_input_tokens), sum(c.x_output_tokens),
    sum(c.x_cached_tokens), sum(c.x_requests), count(*)
FROM charges c JOIN orgs o ON o.id = c.org_id
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11;

ALTER TABLE import_periods DROP CONSTRAINT import_periods_pkey;
ALTER TABLE import_periods DROP COLUMN cost_basis;
ALTER TABLE import_periods ADD PRIMARY KEY (org_id, source, billing_account_id, period_start, import_id);
ALTER TABLE imports DROP COLUMN cost_basis;
