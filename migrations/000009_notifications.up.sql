-- Notifications: where budget alerts and digests go, and a record of every
-- attempt to send one.
--
-- notification_channels are the org's Slack incoming webhook and signed JSON
-- webhook, and a budget's own (budget_id set), which replace the org's of
-- the same kind for that budget's alerts. Email needs no channel row: its
-- recipients come with each notification. A channel's URL is a credential
-- (anyone holding a Slack webhook URL can post to the channel), so it is
-- stored for sending only; pages show url_masked.
--
-- webhook_secrets holds each org's key for signing webhook bodies
-- (HMAC-SHA256). It must be readable to sign, so it cannot be hashed like
-- API tokens; it is shown once, when made or rotated. After a rotation the
-- previous key keeps signing alongside the new one until previous_until, so
-- that receivers can switch without refusing deliveries meanwhile.
--
-- deliveries is one row per notification per channel. dedupe_key names the
-- notification ("alert:budget=12:period=2026-11-01:threshold=80"); it is
-- unique per org and channel, so a notification produced twice (a retried
-- job, two processes) is recorded, and sent, once. body is the request
-- body (or, for email, the message) built when the delivery was recorded,
-- so that every retry sends the same bytes. A worker claims a row by
-- setting status 'sending' with claimed_until; a claim whose worker died
-- expires and the row can be claimed again. See docs/notifications.md.

CREATE TABLE notification_channels (
    org_id     bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id         bigint GENERATED ALWAYS AS IDENTITY,
    -- Null: the org's channel. Set: this budget's, for its alerts only.
    budget_id  bigint,
    kind       text NOT NULL CHECK (kind IN ('slack', 'webhook')),
    url        text NOT NULL,
    url_masked text NOT NULL,
    created_by bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, id),
    FOREIGN KEY (org_id, budget_id) REFERENCES budgets (org_id, id) ON DELETE CASCADE
);
-- One channel of each kind for the org, and one per budget.
CREATE UNIQUE INDEX notification_channels_scope_key
    ON notification_channels (org_id, coalesce(budget_id, 0), kind);

CREATE TABLE webhook_secrets (
    org_id          bigint PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
    secret          text NOT NULL,
    previous        text NOT NULL DEFAULT '',
    previous_until  timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE deliveries (
    org_id        bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id            bigint GENERATED ALWAYS AS IDENTITY,
    kind          text NOT NULL CHECK (kind IN ('budget_alert', 'digest', 'test')),
    channel       text NOT NULL CHECK (channel IN ('email', 'slack', 'webhook')),
    -- The notification_channels row sent to (none for email). No foreign
    -- key: a delivery outlives a removed channel, as history.
    channel_id    bigint,
    target        text NOT NULL,
    subject       text NOT NULL,
    dedupe_key    text NOT NULL,
    body          bytea NOT NULL,
    status        text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'sending', 'sent', 'retrying', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    last_error    text NOT NULL DEFAULT '',
    response_code integer,
    claimed_until timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    sent_at       timestamptz,
    PRIMARY KEY (org_id, id)
);
CREATE UNIQUE INDEX deliveries_dedupe_key ON deliveries (org_id, channel, dedupe_key);
CREATE INDEX deliveries_org_created_idx ON deliveries (org_id, created_at DESC, id DESC);

-- Default privileges from 000001 cover these tables when the same role runs
-- the migrations; granting explicitly keeps them usable if it does not.
GRANT SELECT, INSERT, UPDATE, DELETE ON notification_channels, webhook_secrets, deliveries TO burnrate_app;

ALTER TABLE notification_channels ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON notification_channels TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE webhook_secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON webhook_secrets TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON deliveries TO burnrate_app USING (org_id = burnrate_org_id());
