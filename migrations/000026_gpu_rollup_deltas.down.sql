-- Back to one row a key, kept by statement triggers on charges (000021).
DROP TRIGGER IF EXISTS gpu_resource_daily_org_gone ON orgs;
DROP FUNCTION IF EXISTS gpu_resource_daily_org_gone();

-- One row a key again, and none for an org that is gone.
CREATE TEMP TABLE gpu_resource_daily_compact AS
SELECT g.org_id, g.day, g.provider, g.resource_id, g.instance_type, g.gpu_type, g.gpu_count, g.currency, g.purchase,
    g.team, g.untagged, sum(g.gpu_hours) AS gpu_hours, sum(g.cost) AS cost, sum(g.rows)::bigint AS rows
FROM gpu_resource_daily g
WHERE EXISTS (SELECT 1 FROM orgs o WHERE o.id = g.org_id)
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
HAVING sum(g.rows) <> 0;
DELETE FROM gpu_resource_daily;
INSERT INTO gpu_resource_daily SELECT * FROM gpu_resource_daily_compact;
DROP TABLE gpu_resource_daily_compact;

DROP INDEX IF EXISTS gpu_resource_daily_org_day;
ALTER TABLE gpu_resource_daily DROP CONSTRAINT IF EXISTS gpu_resource_daily_rows_positive;
ALTER TABLE gpu_resource_daily ADD PRIMARY KEY (org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count,
    currency, purchase, team, untagged);
ALTER TABLE gpu_resource_daily ADD FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE;

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

CREATE OR REPLACE FUNCTION gpu_resource_daily_sync() RETURNS trigger LANGUAGE plpgsql AS $$
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
