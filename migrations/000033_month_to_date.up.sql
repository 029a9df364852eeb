-- The dashboard's drivers and one-dimension sums, month to date: each day's
-- row holds the sums from the first of its month through that day
-- (docs/data-model.md, "Rollups"). Any range is then at most its months'
-- last days, plus the month to date of its last day, less the month to
-- date of the day before its first: a 90-day view reads five days' rows
-- wherever it starts and ends. Read as whole months, ISO weeks and single
-- days (period_drivers, period_spend_by), a range that started and ended
-- mid-week read up to fifteen single days besides, and its cost doubled
-- with the alignment. Derived from daily_spend and daily_spend_by by the
-- triggers below, in the same transaction as whatever wrote them; they
-- replace period_drivers and period_spend_by.
CREATE TABLE month_to_date_drivers (
    org_id      bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    day         date NOT NULL, -- in the org's time zone; the sums run from the 1st of its month
    provider    text NOT NULL,
    service     text NOT NULL,
    sub_account text NOT NULL,
    model       text NOT NULL,
    currency    text NOT NULL,
    billed      numeric NOT NULL,
    effective   numeric NOT NULL,
    rows        bigint NOT NULL, -- charges; a key at zero is deleted
    PRIMARY KEY (org_id, day, provider, service, sub_account, model, currency)
);

CREATE TABLE month_to_date_spend_by (
    org_id        bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    day           date NOT NULL, -- as in month_to_date_drivers
    dim           text NOT NULL CHECK (dim IN ('total', 'source', 'provider', 'service', 'sub_account', 'team',
                                               'model', 'charge_category', 'gpu_type')),
    value         text NOT NULL,
    currency      text NOT NULL,
    billed        numeric NOT NULL,
    effective     numeric NOT NULL,
    gpu_hours     numeric NOT NULL,
    input_tokens  bigint NOT NULL,
    output_tokens bigint NOT NULL,
    cached_tokens bigint NOT NULL,
    requests      bigint NOT NULL,
    rows          bigint NOT NULL, -- charges; a key at zero is deleted
    PRIMARY KEY (org_id, day, dim, value, currency)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON month_to_date_drivers, month_to_date_spend_by TO burnrate_app;
ALTER TABLE month_to_date_drivers ENABLE ROW LEVEL SECURITY;
ALTER TABLE month_to_date_spend_by ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON month_to_date_drivers TO burnrate_app USING (org_id = burnrate_org_id());
CREATE POLICY org_fence ON month_to_date_spend_by TO burnrate_app USING (org_id = burnrate_org_id());

-- month_to_date_drivers_apply adds a statement's change of daily_spend (its
-- transition tables) to month_to_date_drivers: a change on day D changes
-- the month to date of D and of every later day of its month. The change
-- is summed to the drivers' four dimensions a day first, so an import of a
-- whole month spreads a few hundred keys a day over the month's days, not
-- daily_spend's rows. Keys left with no charges are deleted.
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

-- month_to_date_spend_by_apply does the same for daily_spend_by, chained on
-- it as period_spend_by_apply was: daily_spend_by already holds each day's
-- sums over one dimension, a few dozen rows a day.
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

DROP TRIGGER period_drivers_insert ON daily_spend;
DROP TRIGGER period_drivers_update ON daily_spend;
DROP TRIGGER period_drivers_delete ON daily_spend;
DROP TRIGGER period_spend_by_insert ON daily_spend_by;
DROP TRIGGER period_spend_by_update ON daily_spend_by;
DROP TRIGGER period_spend_by_delete ON daily_spend_by;
DROP FUNCTION period_drivers_apply(), period_spend_by_apply();
DROP TABLE period_drivers, period_spend_by;

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

-- From the spend already rolled up, in key order, so that a day's rows
-- share pages. A key's month to date runs from its first day with charges
-- in the month to the month's last day.
INSERT INTO month_to_date_drivers (org_id, day, provider, service, sub_account, model, currency, billed, effective, rows)
SELECT g.org_id, g.day + i, g.provider, g.service, g.sub_account, g.model, g.currency,
    sum(g.billed), sum(g.effective), sum(g.rows)
FROM (
    SELECT org_id, day, provider, service, sub_account, model, currency,
        sum(billed) AS billed, sum(effective) AS effective, sum(rows) AS rows
    FROM daily_spend
    GROUP BY 1, 2, 3, 4, 5, 6, 7
) g
CROSS JOIN LATERAL generate_series(0, ((g.day - extract(day FROM g.day)::int + 1) + interval '1 month')::date
    - 1 - g.day) i
GROUP BY 1, 2, 3, 4, 5, 6, 7
HAVING sum(g.rows) <> 0
ORDER BY 1, 2, 3, 4, 5, 6, 7;

INSERT INTO month_to_date_spend_by (org_id, day, dim, value, currency, billed, effective, gpu_hours,
    input_tokens, output_tokens, cached_tokens, requests, rows)
SELECT b.org_id, b.day + i, b.dim, b.value, b.currency, sum(b.billed), sum(b.effective), sum(b.gpu_hours),
    sum(b.input_tokens), sum(b.output_tokens), sum(b.cached_tokens), sum(b.requests), sum(b.rows)
FROM daily_spend_by b
CROSS JOIN LATERAL generate_series(0, ((b.day - extract(day FROM b.day)::int + 1) + interval '1 month')::date
    - 1 - b.day) i
GROUP BY 1, 2, 3, 4, 5
HAVING sum(b.rows) <> 0
ORDER BY 1, 2, 3, 4, 5;
