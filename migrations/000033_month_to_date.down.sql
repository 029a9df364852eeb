-- Back to period_drivers and period_spend_by, as 000025 and 000030 made
-- them, filled from the spend rolled up.
DROP TRIGGER month_to_date_drivers_insert ON daily_spend;
DROP TRIGGER month_to_date_drivers_update ON daily_spend;
DROP TRIGGER month_to_date_drivers_delete ON daily_spend;
DROP TRIGGER month_to_date_spend_by_insert ON daily_spend_by;
DROP TRIGGER month_to_date_spend_by_update ON daily_spend_by;
DROP TRIGGER month_to_date_spend_by_delete ON daily_spend_by;
DROP FUNCTION month_to_date_drivers_apply(), month_to_date_spend_by_apply();
DROP TABLE month_to_date_drivers, month_to_date_spend_by;

-- The dashboard's drivers (spend by provider, service, account and model)
-- per day, per ISO week (from Monday) and per month, beside daily_spend
-- (docs/data-model.md, "Rollups"). A range's drivers are read as its whole
-- months, whole weeks and few other days: a 90-day view reads a dozen
-- periods' rows instead of 90 days' combinations of nine dimensions.
-- Derived from daily_spend alone, by the triggers below, in the same
-- transaction as whatever wrote it.
CREATE TABLE period_drivers (
    org_id      bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    grain       text NOT NULL CHECK (grain IN ('day', 'week', 'month')),
    start       date NOT NULL, -- the period's first day, in the org's time zone
    provider    text NOT NULL,
    service     text NOT NULL,
    sub_account text NOT NULL,
    model       text NOT NULL,
    currency    text NOT NULL,
    billed      numeric NOT NULL,
    effective   numeric NOT NULL,
    rows        bigint NOT NULL, -- charges; a key at zero is deleted
    PRIMARY KEY (org_id, grain, start, provider, service, sub_account, model, currency),
    CHECK (CASE grain WHEN 'day' THEN true WHEN 'week' THEN extract(isodow FROM start) = 1
        ELSE extract(day FROM start) = 1 END)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON period_drivers TO burnrate_app;
ALTER TABLE period_drivers ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON period_drivers TO burnrate_app USING (org_id = burnrate_org_id());

-- period_drivers_apply adds a statement's change of daily_spend to
-- period_drivers, as daily_spend_by_apply does to daily_spend_by.
CREATE FUNCTION period_drivers_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    cols constant text := 'org_id, day, provider, service, sub_account, model, currency, '
        '%1$sbilled AS billed, %1$seffective AS effective, %1$srows AS rows';
    src text;
    orgs bigint[];
    grains text[];
    starts date[];
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
        WITH d AS ($q$ || src || $q$), up AS (
            INSERT INTO period_drivers AS t (org_id, grain, start, provider, service, sub_account, model, currency,
                billed, effective, rows)
            SELECT d.org_id, p.grain, p.start, d.provider, d.service, d.sub_account, d.model, d.currency,
                sum(d.billed), sum(d.effective), sum(d.rows)
            FROM d
            CROSS JOIN LATERAL (VALUES ('day', d.day), ('week', d.day - extract(isodow FROM d.day)::int + 1),
                ('month', d.day - extract(day FROM d.day)::int + 1)) p (grain, start)
            GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
            ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
            ON CONFLICT (org_id, grain, start, provider, service, sub_account, model, currency) DO UPDATE SET
                billed = t.billed + EXCLUDED.billed,
                effective = t.effective + EXCLUDED.effective,
                rows = t.rows + EXCLUDED.rows
            RETURNING t.org_id, t.grain, t.start, t.provider, t.service, t.sub_account, t.model, t.currency, t.rows
        )
        SELECT array_agg(org_id), array_agg(grain), array_agg(start), array_agg(provider), array_agg(service),
            array_agg(sub_account), array_agg(model), array_agg(currency)
        FROM up WHERE rows = 0$q$
    INTO orgs, grains, starts, provs, svcs, accts, mods, curs;
    IF orgs IS NOT NULL THEN
        DELETE FROM period_drivers t
        USING unnest(orgs, grains, starts, provs, svcs, accts, mods, curs)
            g (org_id, grain, start, provider, service, sub_account, model, currency)
        WHERE t.org_id = g.org_id AND t.grain = g.grain AND t.start = g.start AND t.provider = g.provider
            AND t.service = g.service AND t.sub_account = g.sub_account AND t.model = g.model
            AND t.currency = g.currency AND t.rows = 0;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER period_drivers_insert AFTER INSERT ON daily_spend
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION period_drivers_apply();
CREATE TRIGGER period_drivers_update AFTER UPDATE ON daily_spend
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION period_drivers_apply();
CREATE TRIGGER period_drivers_delete AFTER DELETE ON daily_spend
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION period_drivers_apply();

INSERT INTO period_drivers (org_id, grain, start, provider, service, sub_account, model, currency, billed, effective, rows)
SELECT d.org_id, p.grain, p.start, d.provider, d.service, d.sub_account, d.model, d.currency,
    sum(d.billed), sum(d.effective), sum(d.rows)
FROM daily_spend d
CROSS JOIN LATERAL (VALUES ('day', d.day), ('week', d.day - extract(isodow FROM d.day)::int + 1),
    ('month', d.day - extract(day FROM d.day)::int + 1)) p (grain, start)
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;

-- daily_spend_by per ISO week (from Monday) and per month, beside
-- period_drivers (docs/data-model.md, "Rollups"). The unfiltered
-- breakdown's GPU types, models and filter choices are sums over one
-- dimension at a time; read from daily_spend_by they cost a range's every
-- day (a few dozen rows each), read as whole months, whole weeks and the
-- few other days (driverReads) a dozen periods. The day grain is
-- daily_spend_by itself. Derived from daily_spend_by alone, by the triggers
-- below, so from daily_spend in the same transaction as whatever wrote it.
CREATE TABLE period_spend_by (
    org_id        bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    grain         text NOT NULL CHECK (grain IN ('week', 'month')),
    start         date NOT NULL, -- the period's first day, in the org's time zone
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
    PRIMARY KEY (org_id, grain, start, dim, value, currency),
    CHECK (CASE grain WHEN 'week' THEN extract(isodow FROM start) = 1 ELSE extract(day FROM start) = 1 END)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON period_spend_by TO burnrate_app;
ALTER TABLE period_spend_by ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON period_spend_by TO burnrate_app USING (org_id = burnrate_org_id());

-- period_spend_by_apply adds a statement's change of daily_spend_by (its
-- transition tables) to period_spend_by, as daily_spend_by_apply adds
-- daily_spend's to daily_spend_by, and deletes the keys left with no
-- charges. Chained on daily_spend_by rather than on daily_spend: each day's
-- sums over one dimension are made once, by daily_spend_by_apply, and this
-- adds up their few dozen rows a day, not daily_spend's rows nine times
-- over: rewriting an org's 108,000 daily_spend rows, it takes a tenth of
-- period_drivers_apply's time, where on daily_spend it took more. So
-- period_spend_by is daily_spend_by by week and month after any write to
-- it; daily_spend_by_apply's upsert fires the INSERT and UPDATE triggers,
-- its deletion of emptied keys (all sums zero) the DELETE one.
CREATE FUNCTION period_spend_by_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    cols constant text := 'org_id, day, dim, value, currency, %1$sbilled AS billed, %1$seffective AS effective, '
        '%1$sgpu_hours AS gpu_hours, %1$sinput_tokens AS input_tokens, %1$soutput_tokens AS output_tokens, '
        '%1$scached_tokens AS cached_tokens, %1$srequests AS requests, %1$srows AS rows';
    src text;
    orgs bigint[];
    grains text[];
    starts date[];
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
        WITH d AS ($q$ || src || $q$), up AS (
            INSERT INTO period_spend_by AS t (org_id, grain, start, dim, value, currency, billed, effective, gpu_hours,
                input_tokens, output_tokens, cached_tokens, requests, rows)
            SELECT d.org_id, p.grain, p.start, d.dim, d.value, d.currency, sum(d.billed), sum(d.effective),
                sum(d.gpu_hours), sum(d.input_tokens), sum(d.output_tokens), sum(d.cached_tokens), sum(d.requests),
                sum(d.rows)
            FROM d
            CROSS JOIN LATERAL (VALUES ('week', d.day - extract(isodow FROM d.day)::int + 1),
                ('month', d.day - extract(day FROM d.day)::int + 1)) p (grain, start)
            GROUP BY 1, 2, 3, 4, 5, 6
            ORDER BY 1, 2, 3, 4, 5, 6
            ON CONFLICT (org_id, grain, start, dim, value, currency) DO UPDATE SET
                billed = t.billed + EXCLUDED.billed,
                effective = t.effective + EXCLUDED.effective,
                gpu_hours = t.gpu_hours + EXCLUDED.gpu_hours,
                input_tokens = t.input_tokens + EXCLUDED.input_tokens,
                output_tokens = t.output_tokens + EXCLUDED.output_tokens,
                cached_tokens = t.cached_tokens + EXCLUDED.cached_tokens,
                requests = t.requests + EXCLUDED.requests,
                rows = t.rows + EXCLUDED.rows
            RETURNING t.org_id, t.grain, t.start, t.dim, t.value, t.currency, t.rows
        )
        SELECT array_agg(org_id), array_agg(grain), array_agg(start), array_agg(dim), array_agg(value),
            array_agg(currency)
        FROM up WHERE rows = 0$q$
    INTO orgs, grains, starts, dims, vals, curs;
    IF orgs IS NOT NULL THEN
        DELETE FROM period_spend_by t
        USING unnest(orgs, grains, starts, dims, vals, curs) g (org_id, grain, start, dim, value, currency)
        WHERE t.org_id = g.org_id AND t.grain = g.grain AND t.start = g.start AND t.dim = g.dim
            AND t.value = g.value AND t.currency = g.currency AND t.rows = 0;
    END IF;
    RETURN NULL;
END
$fn$;
CREATE TRIGGER period_spend_by_insert AFTER INSERT ON daily_spend_by
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION period_spend_by_apply();
CREATE TRIGGER period_spend_by_update AFTER UPDATE ON daily_spend_by
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION period_spend_by_apply();
CREATE TRIGGER period_spend_by_delete AFTER DELETE ON daily_spend_by
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION period_spend_by_apply();

-- From daily_spend_by, which holds the same sums a day (a few dozen rows a
-- day, not a thousand); in key order, so that a period's rows share pages.
INSERT INTO period_spend_by (org_id, grain, start, dim, value, currency, billed, effective, gpu_hours,
    input_tokens, output_tokens, cached_tokens, requests, rows)
SELECT b.org_id, p.grain, p.start, b.dim, b.value, b.currency, sum(b.billed), sum(b.effective), sum(b.gpu_hours),
    sum(b.input_tokens), sum(b.output_tokens), sum(b.cached_tokens), sum(b.requests), sum(b.rows)
FROM daily_spend_by b
CROSS JOIN LATERAL (VALUES ('week', b.day - extract(isodow FROM b.day)::int + 1),
    ('month', b.day - extract(day FROM b.day)::int + 1)) p (grain, start)
GROUP BY 1, 2, 3, 4, 5, 6
HAVING sum(b.rows) <> 0
ORDER BY 1, 2, 3, 4, 5, 6;
