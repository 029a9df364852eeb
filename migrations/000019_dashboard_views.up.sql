-- The dashboard view (its URL query: range, group, filters) each person last
-- looked at in each org, so that opening /dashboard again shows it. One row
-- per user and org, written when the view changes; see docs/data-model.md.
CREATE TABLE dashboard_views (
    org_id     bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    query      text NOT NULL CHECK (length(query) <= 2000),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON dashboard_views TO burnrate_app;

-- The org fence, and a person sees and writes only their own view.
ALTER TABLE dashboard_views ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON dashboard_views TO burnrate_app
    USING (org_id = burnrate_org_id() AND user_id = burnrate_user_id());
