-- Per-dimension daily rollups beside the wide one (docs/data-model.md,
-- "Rollups"). daily_spend keys a day by nine dimensions at once, so a chart
-- by one of them, or a total, reads every combination of the other eight:
-- about a thousand rows a day for a large org. daily_spend_by keeps, for
-- each day, the same measures summed over one dimension at a time (dim
-- names a column of daily_spend; 'total' is the day's sum over all of
-- them, value ''), a few dozen rows a day. It is derived from daily_spend
-- alone, by the triggers below, so whatever writes daily_spend (imports,
-- restatements, deleted imports, rebuilds, migrations) keeps it in step
-- in the same transaction.
CREATE TABLE daily_spend_by (
    org_id        bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    dim           text NOT NULL CHECK (dim IN ('total', 'source', 'provider', 'service', 'sub_account', 'team',
                                               'model', 'charge_category', 'gpu_type')),
    day           date NOT NULL,
    value         text NOT NULL,
    currency      text NOT NULL,
    billed        numeric NOT NULL,
    effective     numeric NOT NULL,
    gpu_hours     numeric NOT NULL,
    input_tokens  bigint NOT NULL,
    output_tokens bigint NOT NULL,
    cached_tokens bigint NOT NULL,
    requests      bigint NOT NULL,
    rows          bigint NOT NULL, -- daily_spend rows' charges; a key at zero is deleted
    PRIMARY KEY (org_id, dim, day, value, currency)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON daily_spend_by TO burnrate_app;
ALTER TABLE daily_spend_by ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON daily_spend_by TO burnrate_app USING (org_id = burnrate_org_id());

-- daily_spend_by_apply adds a statement's change of daily_spend (its
-- transition tables: rows added, rows taken out) to daily_spend_by, and
-- deletes the keys left with no charges. It runs as the role that wrote
-- daily_spend, under the same fence. Keys are written in order, so two
-- transactions touching the same keys take their locks in the same order.
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

-- A trigger with transition tables takes one event.
CREATE TRIGGER daily_spend_by_insert AFTER INSERT ON daily_spend
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION daily_spend_by_apply();
CREATE TRIGGER daily_spend_by_update AFTER UPDATE ON daily_spend
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION daily_spend_by_apply();
CREATE TRIGGER daily_spend_by_delete AFTER DELETE ON daily_spend
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION daily_spend_by_apply();

INSERT INTO daily_spend_by (org_id, dim, day, value, currency, billed, effective, gpu_hours,
    input_tokens, output_tokens, cached_tokens, requests, rows)
SELECT d.org_id, k.dim, d.day, k.value, d.currency, sum(d.billed), sum(d.effective), sum(d.gpu_hours),
    sum(d.input_tokens), sum(d.output_tokens), sum(d.cached_tokens), sum(d.requests), sum(d.rows)
FROM daily_spend d
CROSS JOIN LATERAL (VALUES ('total', ''), ('source', d.source), ('provider', d.provider),
    ('service', d.service), ('sub_account', d.sub_account), ('team', d.team), ('model', d.model),
    ('charge_category', d.charge_category), ('gpu_type', d.gpu_type)) k (dim, value)
GROUP BY 1, 2, 3, 4, 5;
