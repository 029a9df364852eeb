-- Stripe billing: what an org's subscription says, and every Stripe event
-- received, by its id.
--
-- orgs already has plan, plan_status, stripe_customer_id,
-- stripe_subscription_id and plan_renews_at (000001). Added here:
--   stripe_plan            the plan the subscription is for, kept when a
--                          lapsed payment drops the org to 'free', so that
--                          paying restores it;
--   plan_grace_until       after a failed payment, when the org drops to
--                          'free' unless the invoice is paid (a periodic job
--                          does it);
--   stripe_subscription_at the creation time of the last subscription event
--                          applied, and stripe_invoice_at of the last
--                          invoice event: Stripe does not deliver events in
--                          order, so an older event never undoes a newer one.
-- See docs/billing.md.
ALTER TABLE orgs
    ADD COLUMN IF NOT EXISTS stripe_plan text,
    ADD COLUMN IF NOT EXISTS plan_grace_until timestamptz,
    ADD COLUMN IF NOT EXISTS stripe_subscription_at timestamptz,
    ADD COLUMN IF NOT EXISTS stripe_invoice_at timestamptz;

-- One Stripe customer per org, and a customer belongs to one org: webhook
-- events find their org by it.
CREATE UNIQUE INDEX IF NOT EXISTS orgs_stripe_customer_id_key ON orgs (stripe_customer_id)
    WHERE stripe_customer_id IS NOT NULL;

-- stripe_events makes re-deliveries no-ops: an event is applied in the
-- transaction that inserts its id, and an id already here is skipped. It is
-- not a tenant table (an event's org is known only once it is read), and
-- only the webhook, which is not fenced to an org, touches it.
CREATE TABLE IF NOT EXISTS stripe_events (
    id          text PRIMARY KEY,
    type        text NOT NULL,
    org_id      bigint REFERENCES orgs (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL,
    api_version text NOT NULL DEFAULT '',
    payload     jsonb NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
);
-- Default privileges from 000001 granted it; the fenced role has no business here.
REVOKE ALL ON stripe_events FROM burnrate_app;
