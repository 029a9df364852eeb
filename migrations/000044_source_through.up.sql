-- How far each source of an org's spend reaches, kept as imports finish
-- (docs/data-model.md, "Freshness"): the dashboard, the budgets pages and
-- the digest ask it on every request, and reading it from import_extents
-- grew with the import history (a year of a connection syncing four times
-- a day is thousands of imports: 14 ms a request). One row per format,
-- provider, billing account and connection (0: uploads): the latest
-- data_through and finished_at, the first and last day, of its succeeded
-- imports' extents. FinishImport raises it in the import's transaction; a
-- removed or deleted import's keys are computed again from the extents
-- that remain, in that import's transaction.

CREATE TABLE source_through (
    org_id          bigint NOT NULL,
    source          text NOT NULL,
    provider        text NOT NULL,
    billing_account text NOT NULL,
    connection_id   bigint NOT NULL DEFAULT 0,
    data_through    timestamptz NOT NULL,
    last_import     timestamptz NOT NULL,
    first_day       date NOT NULL,
    last_day        date NOT NULL,
    PRIMARY KEY (org_id, source, provider, billing_account, connection_id)
);
-- Distributed like the other tenant tables on Citus, before its foreign key.
SELECT burnrate_distribute('source_through');
ALTER TABLE source_through ADD FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE;

GRANT SELECT, INSERT, UPDATE, DELETE ON source_through TO burnrate_app;
ALTER TABLE source_through ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON source_through TO burnrate_app USING (org_id = burnrate_org_id());

INSERT INTO source_through (org_id, source, provider, billing_account, connection_id, data_through, last_import, first_day, last_day)
SELECT e.org_id, i.source, e.provider, e.billing_account, coalesce(i.connection_id, 0),
       max(e.data_through), coalesce(max(i.finished_at), max(i.created_at)), min(e.first_day), max(e.last_day)
FROM import_extents e
JOIN imports i ON i.org_id = e.org_id AND i.id = e.import_id
WHERE i.status = 'succeeded'
GROUP BY 1, 2, 3, 4, 5;
