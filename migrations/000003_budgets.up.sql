-- Budgets: an amount per day or per month for a slice of the org's spend,
-- and the thresholds whose crossing the daily digest reports.
--
-- A budget's scope is a filter over the dashboard's dimensions (provider,
-- service, account, team, model, source) plus tag key=value pairs, kept as
-- one jsonb object so that new dimensions need no migration. Scopes without
-- tags are answered from daily_spend; tag scopes need charges.tags, which
-- the rollup does not keep (store/budget.go says how each is computed).
--
-- Past periods are not stored: their spend is recomputed from daily_spend,
-- which outlives every reset. budget_alerts records when each threshold of
-- each period was first seen crossed, so that history (and the digest's
-- "exactly once") survives a period rolling over.

CREATE TABLE budgets (
    org_id     bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id         bigint GENERATED ALWAYS AS IDENTITY,
    name       text NOT NULL,
    amount     numeric NOT NULL CHECK (amount > 0),
    currency   text NOT NULL,
    period     text NOT NULL CHECK (period IN ('daily', 'monthly')),
    -- {"provider": "aws", "team": "ml", "tags": {"env": "prod"}}; absent
    -- keys match everything, {} is all of the org's spend.
    scope      jsonb NOT NULL DEFAULT '{}',
    -- Percentages of amount, ascending.
    thresholds integer[] NOT NULL DEFAULT '{50,80,100}',
    recipients text[] NOT NULL DEFAULT '{}',
    created_by bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id)
);

CREATE TABLE budget_alerts (
    org_id       bigint NOT NULL,
    budget_id    bigint NOT NULL,
    -- The first day of the period (a day in the org's time zone).
    period_start date NOT NULL,
    threshold    integer NOT NULL,
    crossed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, budget_id, period_start, threshold),
    FOREIGN KEY (org_id, budget_id) REFERENCES budgets (org_id, id) ON DELETE CASCADE
);

ALTER TABLE budgets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON budgets TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE budget_alerts ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON budget_alerts TO burnrate_app USING (org_id = burnrate_org_id());
