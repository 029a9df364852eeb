-- Mail: the outbox every email goes through, and password reset tokens.
--
-- A message is stored whole in the outbox, in the transaction of the work
-- that sends it (an invite, a digest), and a River job that carries only its
-- id delivers it, retrying with backoff. The row says how that went, so the
-- app can show what was sent to whom, and an install without SMTP_URL keeps
-- its mail here, unsent, instead of losing it.
--
-- The outbox is not keyed by org_id first, unlike the tenant tables: account
-- mail (password resets, sign-up notices) belongs to no org, and has a null
-- org_id. An org's rows are fenced like any tenant table's; account mail is
-- invisible to a request fenced to an org.

CREATE TABLE IF NOT EXISTS outbox (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id     bigint REFERENCES orgs (id) ON DELETE CASCADE,
    -- What the mail is: invite, password_reset, signup_notice, digest, alert…
    kind       text NOT NULL CHECK (kind <> ''),
    recipients text[] NOT NULL CHECK (cardinality(recipients) > 0),
    subject    text NOT NULL,
    -- The whole message (text, HTML, inline parts, headers) as JSON.
    message    jsonb NOT NULL,
    -- queued: waiting for its job, or between retries; sent; failed: given
    -- up (refused for good, or out of attempts); not_sent: mail is not
    -- configured, so it was kept here.
    status     text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed', 'not_sent')),
    attempts   integer NOT NULL DEFAULT 0,
    last_error text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz
);
-- An org's mail, newest first: the outbox page.
CREATE INDEX IF NOT EXISTS outbox_org_id_idx ON outbox (org_id, id DESC);
-- Old mail is deleted by age.
CREATE INDEX IF NOT EXISTS outbox_created_at_idx ON outbox (created_at);

-- A password reset link carries a secret whose SHA-256 is stored here. It
-- works once, for an hour; resetting the password uses up every link of the
-- user. Not a tenant table: people are not scoped to an org.
CREATE TABLE IF NOT EXISTS password_resets (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
-- The link carries only the token.
CREATE UNIQUE INDEX IF NOT EXISTS password_resets_token_hash_key ON password_resets (token_hash);
CREATE INDEX IF NOT EXISTS password_resets_user_id_idx ON password_resets (user_id);

-- Default privileges from 000001 cover the outbox when the same role runs
-- the migrations; granting explicitly keeps it usable if it does not. No
-- request fenced to an org has any business with reset tokens (resets run
-- on the connecting role, like log-in), so the fenced role gets none.
GRANT SELECT, INSERT, UPDATE, DELETE ON outbox TO burnrate_app;
REVOKE ALL ON password_resets FROM burnrate_app;

ALTER TABLE outbox ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS org_fence ON outbox;
CREATE POLICY org_fence ON outbox TO burnrate_app USING (org_id = burnrate_org_id());
