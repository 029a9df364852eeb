ALTER TABLE budget_alerts
    DROP COLUMN IF EXISTS spent,
    DROP COLUMN IF EXISTS notified_at;
