-- gpu_resource_daily becomes a table of signed deltas, so that an import
-- can append its GPU rollup with one COPY instead of a statement trigger
-- re-reading every row it wrote (docs/savings.md, "Speed: the GPU usage rollup"). The
-- statement-level INSERT trigger captured every new charge, wide, and
-- upserted into an eleven-column key with a foreign key check a row: most
-- of a large CUR import's time.
--
-- Now:
-- * Nothing on charges' INSERT: whatever inserts charges writes the rollup
--   itself (store.WriteCharges, from the rows as they stream past for a
--   cloud export, or from the import's stored rows for keyed sources).
-- * A key may have several rows; what a key holds is their sum.
-- * UPDATE and DELETE on charges still go through statement triggers, which
--   add the change to the days it touches and rewrite those days' rows
--   compacted, one row a key, dropping keys left with no charges (a
--   restated month does not leave its old rows and their negations
--   behind). store.RebuildDailySpend compacts all.
-- * So every row counts at least one charge (rows > 0, checked): a
--   reader merges a key's rows as they are, no key ever stands for
--   charges that are gone.
-- * No foreign key to orgs (one check per row written): a trigger on orgs
--   deletes a deleted org's rows instead.
DROP TRIGGER gpu_resource_daily_insert ON charges;
ALTER TABLE gpu_resource_daily DROP CONSTRAINT gpu_resource_daily_pkey;
ALTER TABLE gpu_resource_daily DROP CONSTRAINT gpu_resource_daily_org_id_fkey;
CREATE INDEX gpu_resource_daily_org_day ON gpu_resource_daily (org_id, day);
ALTER TABLE gpu_resource_daily ADD CONSTRAINT gpu_resource_daily_rows_positive CHECK (rows > 0);

DROP FUNCTION gpu_resource_daily_add(int);

CREATE OR REPLACE FUNCTION gpu_resource_daily_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    -- The GPU usage rows of a charges-shaped relation, one delta each.
    rowsql constant text := $q$
        SELECT c.org_id, (c.charge_period_start AT TIME ZONE o.time_zone)::date AS day, c.provider_name AS provider,
            c.resource_id, c.x_instance_type AS instance_type, c.x_gpu_type AS gpu_type, c.x_gpu_count AS gpu_count,
            c.billing_currency AS currency,
            CASE WHEN c.sku ~* '(spot|preemptible)' THEN 'spot'
                WHEN c.effective_cost <> c.billed_cost THEN 'committed'
                ELSE 'on-demand' END AS purchase,
            c.team, (c.tags IS NULL OR c.tags = '{}'::jsonb) AS untagged,
            %1$s c.x_gpu_hours AS gpu_hours, %1$s c.effective_cost AS cost, %1$s 1 AS rows
        FROM %2$s c JOIN orgs o ON o.id = c.org_id
        WHERE c.x_gpu_hours > 0 AND c.charge_category = 'Usage'$q$;
    src text;
BEGIN
    src := format(rowsql, '-', 'old_rows');
    IF TG_OP = 'UPDATE' THEN
        src := src || ' UNION ALL ' || format(rowsql, '', 'new_rows');
    END IF;
    EXECUTE $q$
        WITH d AS ($q$ || src || $q$
        ), touched AS (
            SELECT DISTINCT org_id, day FROM d
        ), gone AS (
            DELETE FROM gpu_resource_daily g USING touched t
            WHERE g.org_id = t.org_id AND g.day = t.day
            RETURNING g.org_id, g.day, g.provider, g.resource_id, g.instance_type, g.gpu_type, g.gpu_count,
                g.currency, g.purchase, g.team, g.untagged, g.gpu_hours, g.cost, g.rows
        )
        INSERT INTO gpu_resource_daily (org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count,
            currency, purchase, team, untagged, gpu_hours, cost, rows)
        SELECT org_id, day, provider, resource_id, instance_type, gpu_type, gpu_count, currency, purchase, team,
            untagged, sum(gpu_hours), sum(cost), sum(rows)
        FROM (SELECT * FROM gone UNION ALL SELECT * FROM d) x
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
        HAVING sum(rows) <> 0$q$;
    RETURN NULL;
END
$fn$;

-- An org's rows go with it. SECURITY DEFINER, as the cascade it replaces
-- ran: the rows are deleted whoever deletes the org.
CREATE FUNCTION gpu_resource_daily_org_gone() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, public AS $fn$
BEGIN
    DELETE FROM gpu_resource_daily g USING old_orgs o WHERE g.org_id = o.id;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER gpu_resource_daily_org_gone AFTER DELETE ON orgs
    REFERENCING OLD TABLE AS old_orgs FOR EACH STATEMENT EXECUTE FUNCTION gpu_resource_daily_org_gone();
