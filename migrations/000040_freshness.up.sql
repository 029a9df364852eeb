-- How far each import's data reaches, for freshness: "data through" per
-- source, provider and billing account (docs/data-model.md, "Freshness").
--
-- import_extents is one row per import, provider and billing account the
-- import's rows name: their first and last day (in the org's time zone
-- when imported) and data_through, the newest end of a charge period the
-- rows delivered. Rows whose period is longer than a day (a month's fee,
-- a commitment, a credit) say nothing of how far usage has arrived, so
-- data_through is the latest end among rows of at most 25 hours (a day
-- across a daylight-saving change), a row shorter than an hour (a request)
-- counting as its whole day; an extent with only longer rows takes the
-- latest start. The importer writes them in the import's own
-- transaction (FinishImport); a removed or deleted import's go with it.
--
-- imports.connection_id is the connection that pulled the import (no
-- foreign key: the history outlives a deleted connection).
--
-- Existing imports get their extents from their charges here: one pass over
-- charges, which on a large install takes a while (seconds per ten million
-- rows).

CREATE TABLE import_extents (
    org_id          bigint NOT NULL,
    import_id       bigint NOT NULL,
    provider        text NOT NULL,
    billing_account text NOT NULL,
    first_day       date NOT NULL,
    last_day        date NOT NULL,
    data_through    timestamptz NOT NULL,
    PRIMARY KEY (org_id, import_id, provider, billing_account)
);
-- Distributed like the other tenant tables on Citus, before its foreign key.
SELECT burnrate_distribute('import_extents');
ALTER TABLE import_extents ADD FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE;

GRANT SELECT, INSERT, UPDATE, DELETE ON import_extents TO burnrate_app;
ALTER TABLE import_extents ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON import_extents TO burnrate_app USING (org_id = burnrate_org_id());

ALTER TABLE imports ADD COLUMN connection_id bigint;

INSERT INTO import_extents (org_id, import_id, provider, billing_account, first_day, last_day, data_through)
SELECT c.org_id, c.import_id, c.provider_name, c.billing_account_id,
       min((c.charge_period_start AT TIME ZONE o.time_zone)::date),
       max((c.charge_period_start AT TIME ZONE o.time_zone)::date),
       coalesce(max(CASE WHEN c.charge_period_end - c.charge_period_start >= interval '1 hour' THEN c.charge_period_end
                         ELSE (((c.charge_period_start AT TIME ZONE o.time_zone)::date + 1)::timestamp AT TIME ZONE o.time_zone) END)
                    FILTER (WHERE c.charge_period_end - c.charge_period_start <= interval '25 hours'),
                max(c.charge_period_start))
FROM charges c
JOIN orgs o ON o.id = c.org_id
JOIN imports i ON i.org_id = c.org_id AND i.id = c.import_id AND i.status = 'succeeded'
GROUP BY c.org_id, c.import_id, c.provider_name, c.billing_account_id;
