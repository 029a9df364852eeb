-- The rollup triggers back, as 000021, 000024, 000026 and 000033 made
-- them: the rollups are in step when this runs, and the triggers keep them
-- so for a binary of before 000034, whose store writes only daily_spend.

CREATE FUNCTION daily_spend_by_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    cols constant text := 'org_id, day, source, provider, service, sub_account, team, model, charge_category, '
        'gpu_type, currency, %1$sbilled AS billed, %1$seffective AS effective, %1$sgpu_hours AS gpu_hours, '
        '%1$sinput_tokens AS input_tokens, %1$soutput_tokens AS output_tokens, '
        '%1$scached_tokens AS cached_tokens, %1$srequests AS requests, %1$srows AS rows';
    src text;
    orgs bigint[];
    dims text[];
    days date[];
    vals text[];
    curs text[];
BEGIN
    src := CASE TG_OP
        WHEN 'INSERT' THEN format('SELECT ' || cols || ' FROM new_rows', '')
        WHEN 'DELETE' THEN format('SELECT ' || cols || ' FROM old_rows', '-')
        ELSE format('SELECT ' || cols || ' FROM new_rows', '') || ' UNION ALL '
            || format('SELECT ' || cols || ' FROM old_rows', '-')
    END;
    EXECUTE $q$
        WITH d AS ($q$ || src || $q$), up AS (
            INSERT INTO daily_spend_by AS t (org_id, dim, day, value, currency, billed, effective, gpu_hours,
                input_tokens, output_tokens, cached_tokens, requests, rows)
            SELECT d.org_id, k.dim, d.day, k.value, d.currency, sum(d.billed), sum(d.effective), sum(d.gpu_hours),
                sum(d.input_tokens), sum(d.output_tokens), sum(d.cached_tokens), sum(d.requests), sum(d.rows)
            FROM d
            CROSS JOIN LATERAL (VALUES ('total', ''), ('source', d.source), ('provider', d.provider),
                ('service', d.service), ('sub_account', d.sub_account), ('team', d.team), ('model', d.model),
                ('charge_category', d.charge_category), ('gpu_type', d.gpu_type)) k (dim, value)
            GROUP BY 1, 2, 3, 4, 5
            ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (org_id, dim, day, value, currency) DO UPDATE SET
                billed = t.billed + EXCLUDED.billed,
                effective = t.effective + EXCLUDED.effective,
                gpu_hours = t.gpu_hours + EXCLUDED.gpu_hours,
                input_tokens = t.input_tokens + EXCLUDED.input_tokens,
                output_tokens = t.output_tokens + EXCLUDED.output_tokens,
                cached_tokens = t.cached_tokens + EXCLUDED.cached_tokens,
                requests = t.requests + EXCLUDED.requests,
                rows = t.rows + EXCLUDED.rows
            RETURNING t.org_id, t.dim, t.day, t.value, t.currency, t.rows
        )
        SELECT array_agg(org_id), array_agg(dim), array_agg(day), array_agg(value), array_agg(currency)
        FROM up WHERE rows = 0$q$
    INTO orgs, dims, days, vals, curs;
    IF orgs IS NOT NULL THEN
        DELETE FROM daily_spend_by t
        USING unnest(orgs, dims, days, vals, curs) g (org_id, dim, day, value, currency)
        WHERE t.org_id = g.org_id AND t.dim = g.dim AND t.day = g.day AND t.value = g.value
            AND t.currency = g.currency AND t.rows = 0;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER daily_spend_by_insert AFTER INSERT ON daily_spend
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION daily_spend_by_apply();
CREATE TRIGGER daily_spend_by_update AFTER UPDATE ON daily_spend
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION daily_spend_by_apply();
CREATE TRIGGER daily_spend_by_delete AFTER DELETE ON daily_spend
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION daily_spend_by_apply();

CREATE FUNCTION month_to_date_drivers_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    cols constant text := 'org_id, day, provider, service, sub_account, model, currency, '
        '%1$sbilled AS billed, %1$seffective AS effective, %1$srows AS rows';
    src text;
    orgs bigint[];
    days date[];
    provs text[];
    svcs text[];
    accts text[];
    mods text[];
    curs text[];
BEGIN
    src := CASE TG_OP
        WHEN 'INSERT' THEN format('SELECT ' || cols || ' FROM new_rows', '')
        WHEN 'DELETE' THEN format('SELECT ' || cols || ' FROM old_rows', '-')
        ELSE format('SELECT ' || cols || ' FROM new_rows', '') || ' UNION ALL '
            || format('SELECT ' || cols || ' FROM old_rows', '-')
    END;
    EXECUTE $q$
        WITH d AS ($q$ || src || $q$), g AS (
            SELECT org_id, day, provider, service, sub_account, model, currency,
                sum(billed) AS billed, sum(effective) AS effective, sum(rows) AS rows
            FROM d
            GROUP BY 1, 2, 3, 4, 5, 6, 7
        ), up AS (
            INSERT INTO month_to_date_drivers AS t (org_id, day, provider, service, sub_account, model, currency,
                billed, effective, rows)
            SELECT g.org_id, g.day + i, g.provider, g.service, g.sub_account, g.model, g.currency,
                sum(g.billed), sum(g.effective), sum(g.rows)
            FROM g
            CROSS JOIN LATERAL generate_series(0, ((g.day - extract(day FROM g.day)::int + 1) + interval '1 month')::date
                - 1 - g.day) i
            GROUP BY 1, 2, 3, 4, 5, 6, 7
            ORDER BY 1, 2, 3, 4, 5, 6, 7
            ON CONFLICT (org_id, day, provider, service, sub_account, model, currency) DO UPDATE SET
                billed = t.billed + EXCLUDED.billed,
                effective = t.effective + EXCLUDED.effective,
                rows = t.rows + EXCLUDED.rows
            RETURNING t.org_id, t.day, t.provider, t.service, t.sub_account, t.model, t.currency, t.rows
        )
        SELECT array_agg(org_id), array_agg(day), array_agg(provider), array_agg(service),
            array_agg(sub_account), array_agg(model), array_agg(currency)
        FROM up WHERE rows = 0$q$
    INTO orgs, days, provs, svcs, accts, mods, curs;
    IF orgs IS NOT NULL THEN
        DELETE FROM month_to_date_drivers t
        USING unnest(orgs, days, provs, svcs, accts, mods, curs)
            g (org_id, day, provider, service, sub_account, model, currency)
        WHERE t.org_id = g.org_id AND t.day = g.day AND t.provider = g.provider
            AND t.service = g.service AND t.sub_account = g.sub_account AND t.model = g.model
            AND t.currency = g.currency AND t.rows = 0;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION month_to_date_spend_by_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    cols constant text := 'org_id, day, dim, value, currency, %1$sbilled AS billed, %1$seffective AS effective, '
        '%1$sgpu_hours AS gpu_hours, %1$sinput_tokens AS input_tokens, %1$soutput_tokens AS output_tokens, '
        '%1$scached_tokens AS cached_tokens, %1$srequests AS requests, %1$srows AS rows';
    src text;
    orgs bigint[];
    days date[];
    dims text[];
    vals text[];
    curs text[];
BEGIN
    src := CASE TG_OP
        WHEN 'INSERT' THEN format('SELECT ' || cols || ' FROM new_rows', '')
        WHEN 'DELETE' THEN format('SELECT ' || cols || ' FROM old_rows', '-')
        ELSE format('SELECT ' || cols || ' FROM new_rows', '') || ' UNION ALL '
            || format('SELECT ' || cols || ' FROM old_rows', '-')
    END;
    EXECUTE $q$
        WITH d AS ($q$ || src || $q$), g AS (
            SELECT org_id, day, dim, value, currency, sum(billed) AS billed, sum(effective) AS effective,
                sum(gpu_hours) AS gpu_hours, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
                sum(cached_tokens) AS cached_tokens, sum(requests) AS requests, sum(rows) AS rows
            FROM d
            GROUP BY 1, 2, 3, 4, 5
        ), up AS (
            INSERT INTO month_to_date_spend_by AS t (org_id, day, dim, value, currency, billed, effective, gpu_hours,
                input_tokens, output_tokens, cached_tokens, requests, rows)
            SELECT g.org_id, g.day + i, g.dim, g.value, g.currency, sum(g.billed), sum(g.effective),
                sum(g.gpu_hours), sum(g.input_tokens), sum(g.output_tokens), sum(g.cached_tokens), sum(g.requests),
                sum(g.rows)
            FROM g
            CROSS JOIN LATERAL generate_series(0, ((g.day - extract(day FROM g.day)::int + 1) + interval '1 month')::date
                - 1 - g.day) i
            GROUP BY 1, 2, 3, 4, 5
            ORDER BY 1, 2, 3, 4, 5
            ON CONFLICT (org_id, day, dim, value, currency) DO UPDATE SET
                billed = t.billed + EXCLUDED.billed,
                effective = t.effective + EXCLUDED.effective,
                gpu_hours = t.gpu_hours + EXCLUDED.gpu_hours,
                input_tokens = t.input_tokens + EXCLUDED.input_tokens,
                output_tokens = t.output_tokens + EXCLUDED.output_tokens,
                cached_tokens = t.cached_tokens + EXCLUDED.cached_tokens,
                requests = t.requests + EXCLUDED.requests,
                rows = t.rows + EXCLUDED.rows
            RETURNING t.org_id, t.day, t.dim, t.value, t.currency, t.rows
        )
        SELECT array_agg(org_id), array_agg(day), array_agg(dim), array_agg(value), array_agg(currency)
        FROM up WHERE rows = 0$q$
    INTO orgs, days, dims, vals, curs;
    IF orgs IS NOT NULL THEN
        DELETE FROM month_to_date_spend_by t
        USING unnest(orgs, days, dims, vals, curs) g (org_id, day, dim, value, currency)
        WHERE t.org_id = g.org_id AND t.day = g.day AND t.dim = g.dim
            AND t.value = g.value AND t.currency = g.currency AND t.rows = 0;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER month_to_date_drivers_insert AFTER INSERT ON daily_spend
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION month_to_date_drivers_apply();
CREATE TRIGGER month_to_date_drivers_update AFTER UPDATE ON daily_spend
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION month_to_date_drivers_apply();
CREATE TRIGGER month_to_date_drivers_delete AFTER DELETE ON daily_spend
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION month_to_date_drivers_apply();
CREATE TRIGGER month_to_date_spend_by_insert AFTER INSERT ON daily_spend_by
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION month_to_date_spend_by_apply();
CREATE TRIGGER month_to_date_spend_by_update AFTER UPDATE ON daily_spend_by
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION month_to_date_spend_by_apply();
CREATE TRIGGER month_to_date_spend_by_delete AFTER DELETE ON daily_spend_by
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION month_to_date_spend_by_apply();

CREATE FUNCTION gpu_resource_daily_sync() RETURNS trigger LANGUAGE plpgsql AS $fn$
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

CREATE TRIGGER gpu_resource_daily_update AFTER UPDATE ON charges
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION gpu_resource_daily_sync();
CREATE TRIGGER gpu_resource_daily_delete AFTER DELETE ON charges
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION gpu_resource_daily_sync();

-- An org's rows go with it. SECURITY DEFINER, as the cascade it replaced
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
