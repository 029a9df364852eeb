-- gpu_resource_daily: GPU instance time per resource and day, for the
-- savings finders (docs/savings.md, "What the bills say"). They used to
-- group the org's charges on every request: a 200k-row CUR took seconds.
-- It is kept by statement-level triggers on charges, so every path that
-- writes, replaces, zeroes or deletes charges (COPY, restated periods,
-- bucket replacement, cost-basis separation, import and org deletion) keeps
-- it in step in the same statement, with one aggregate over the statement's
-- rows. Days are in the org's time zone; store.RebuildDailySpend rebuilds
-- it with daily_spend when that changes.
--
-- Only Usage rows with GPU-hours count. Every column the finders merge on
-- is in the key (GPUs per instance, team, whether the row had any tag), so
-- the measures only ever add up and a deletion subtracts exactly.
CREATE TABLE gpu_resource_daily (
    org_id        bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    day           date NOT NULL,
    provider      text NOT NULL,
    resource_id   text NOT NULL,
    instance_type text NOT NULL,
    gpu_type      text NOT NULL,
    gpu_count     numeric NOT NULL,
    currency      text NOT NULL,
    purchase      text NOT NULL, -- store.PurchaseSpot, PurchaseCommitted or PurchaseOnDemand
    team          text NOT NULL,
    untagged      boolean NOT NULL,
    gpu_hours     numeric NOT NULL,
    cost          numeric NOT NULL, -- effective cost
    rows          bigint NOT NULL,
    PRIMARY KEY (org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count, currency, purchase, team, untagged)
);

ALTER TABLE gpu_resource_daily ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, UPDATE, DELETE ON gpu_resource_daily TO burnrate_app;
CREATE POLICY org_fence ON gpu_resource_daily TO burnrate_app USING (org_id = burnrate_org_id());

-- gpu_resource_daily_rows is the rollup of a charges-shaped relation, signed.
CREATE FUNCTION gpu_resource_daily_add(sign int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT format($q$
        INSERT INTO gpu_resource_daily AS g (org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count,
            currency, purchase, team, untagged, gpu_hours, cost, rows)
        SELECT c.org_id, (c.charge_period_start AT TIME ZONE o.time_zone)::date, c.provider_name, c.resource_id,
            c.x_instance_type, c.x_gpu_type, c.x_gpu_count, c.billing_currency,
            CASE WHEN c.sku ~* '(spot|preemptible)' THEN 'spot'
                WHEN c.effective_cost <> c.billed_cost THEN 'committed'
                ELSE 'on-demand' END,
            c.team, (c.tags IS NULL OR c.tags = '{}'::jsonb),
            %1$s * sum(c.x_gpu_hours), %1$s * sum(c.effective_cost), %1$s * count(*)
        FROM %2$s c JOIN orgs o ON o.id = c.org_id
        WHERE c.x_gpu_hours > 0 AND c.charge_category = 'Usage'
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        ON CONFLICT (org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count, currency, purchase, team, untagged)
        DO UPDATE SET gpu_hours = g.gpu_hours + EXCLUDED.gpu_hours, cost = g.cost + EXCLUDED.cost, rows = g.rows + EXCLUDED.rows$q$,
        sign, CASE WHEN sign > 0 THEN 'new_rows' ELSE 'old_rows' END)
$$;

CREATE FUNCTION gpu_resource_daily_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        EXECUTE gpu_resource_daily_add(-1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        EXECUTE gpu_resource_daily_add(1);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM gpu_resource_daily g
        WHERE g.rows = 0 AND g.org_id IN (SELECT DISTINCT org_id FROM old_rows);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER gpu_resource_daily_insert AFTER INSERT ON charges
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gpu_resource_daily_sync();
CREATE TRIGGER gpu_resource_daily_update AFTER UPDATE ON charges
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gpu_resource_daily_sync();
CREATE TRIGGER gpu_resource_daily_delete AFTER DELETE ON charges
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gpu_resource_daily_sync();

-- What charges already hold.
INSERT INTO gpu_resource_daily (org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count,
    currency, purchase, team, untagged, gpu_hours, cost, rows)
SELECT c.org_id, (c.charge_period_start AT TIME ZONE o.time_zone)::date, c.provider_name, c.resource_id,
    c.x_instance_type, c.x_gpu_type, c.x_gpu_count, c.billing_currency,
    CASE WHEN c.sku ~* '(spot|preemptible)' THEN 'spot'
        WHEN c.effective_cost <> c.billed_cost THEN 'committed'
        ELSE 'on-demand' END,
    c.team, (c.tags IS NULL OR c.tags = '{}'::jsonb),
    sum(c.x_gpu_hours), sum(c.effective_cost), count(*)
FROM charges c JOIN orgs o ON o.id = c.org_id
WHERE c.x_gpu_hours > 0 AND c.charge_category = 'Usage'
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11;
