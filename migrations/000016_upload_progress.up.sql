-- How far each running browser upload has read, so that the page's polls
-- can be answered by any app instance, not only the one importing the file
-- (docs/operations.md, "Several serve processes"). Progress is worth nothing after
-- a crash, so the table is UNLOGGED: no WAL for a write every 10,000 rows.
CREATE UNLOGGED TABLE upload_progress (
    org_id     bigint      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    key        text        NOT NULL CHECK (length(key) BETWEEN 1 AND 64),
    rows       bigint      NOT NULL DEFAULT 0 CHECK (rows >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, key)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON upload_progress TO burnrate_app;
ALTER TABLE upload_progress ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON upload_progress TO burnrate_app USING (org_id = burnrate_org_id());
