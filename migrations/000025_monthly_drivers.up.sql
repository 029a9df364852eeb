-- The dashboard's drivers (spend by provider, service, account and model)
-- per month, beside daily_spend (docs/data-model.md, "Rollups"). A range's
-- drivers are its whole months from here and its other days from
-- daily_spend: a 90-day view reads a few thousand rows instead of every
-- day's combinations. Derived from daily_spend alone, by the triggers
-- below, in the same transaction as whatever wrote it.
CREATE TABLE monthly_drivers (
    org_id      bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    month       date NOT NULL CHECK (extract(day FROM month) = 1), -- its first day, in the org's time zone
    provider    text NOT NULL,
    service     text NOT NULL,
    sub_account text NOT NULL,
    model       text NOT NULL,
    currency    text NOT NULL,
    billed      numeric NOT NULL,
    effective   numeric NOT NULL,
    rows        bigint NOT NULL, -- charges; a key at zero is deleted
    PRIMARY KEY (org_id, month, provider, service, sub_account, model, currency)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON monthly_drivers TO burnrate_app;
ALTER TABLE monthly_drivers ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON monthly_drivers TO burnrate_app USING (org_id = burnrate_org_id());

-- monthly_drivers_apply adds a statement's change of daily_spend to
-- monthly_drivers, as daily_spend_by_apply does to daily_spend_by.
CREATE FUNCTION monthly_drivers_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    cols constant text := 'org_id, day - extract(day FROM day)::int + 1 AS month, provider, service, sub_account, '
        'model, currency, %1$sbilled AS billed, %1$seffective AS effective, %1$srows AS rows';
    src text;
    orgs bigint[];
    months date[];
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
            INSERT INTO monthly_drivers AS t (org_id, month, provider, service, sub_account, model, currency,
                billed, effective, rows)
            SELECT org_id, month, provider, service, sub_account, model, currency, sum(billed), sum(effective), sum(rows)
            FROM d
            GROUP BY 1, 2, 3, 4, 5, 6, 7
            ORDER BY 1, 2, 3, 4, 5, 6, 7
            ON CONFLICT (org_id, month, provider, service, sub_account, model, currency) DO UPDATE SET
                billed = t.billed + EXCLUDED.billed,
                effective = t.effective + EXCLUDED.effective,
                rows = t.rows + EXCLUDED.rows
            RETURNING t.org_id, t.month, t.provider, t.service, t.sub_account, t.model, t.currency, t.rows
        )
        SELECT array_agg(org_id), array_agg(month), array_agg(provider), array_agg(service), array_agg(sub_account),
            array_agg(model), array_agg(currency)
        FROM up WHERE rows = 0$q$
    INTO orgs, months, provs, svcs, accts, mods, curs;
    IF orgs IS NOT NULL THEN
        DELETE FROM monthly_drivers t
        USING unnest(orgs, months, provs, svcs, accts, mods, curs)
            g (org_id, month, provider, service, sub_account, model, currency)
        WHERE t.org_id = g.org_id AND t.month = g.month AND t.provider = g.provider AND t.service = g.service
            AND t.sub_account = g.sub_account AND t.model = g.model AND t.currency = g.currency AND t.rows = 0;
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER monthly_drivers_insert AFTER INSERT ON daily_spend
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION monthly_drivers_apply();
CREATE TRIGGER monthly_drivers_update AFTER UPDATE ON daily_spend
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION monthly_drivers_apply();
CREATE TRIGGER monthly_drivers_delete AFTER DELETE ON daily_spend
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION monthly_drivers_apply();

INSERT INTO monthly_drivers (org_id, month, provider, service, sub_account, model, currency, billed, effective, rows)
SELECT org_id, day - extract(day FROM day)::int + 1, provider, service, sub_account, model, currency,
    sum(billed), sum(effective), sum(rows)
FROM daily_spend
GROUP BY 1, 2, 3, 4, 5, 6, 7;
