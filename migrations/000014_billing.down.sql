DROP TABLE IF EXISTS stripe_events;
DROP INDEX IF EXISTS orgs_stripe_customer_id_key;
ALTER TABLE orgs
    DROP COLUMN IF EXISTS stripe_plan,
    DROP COLUMN IF EXISTS plan_grace_until,
    DROP COLUMN IF EXISTS stripe_subscription_at,
    DROP COLUMN IF EXISTS stripe_invoice_at;
