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
