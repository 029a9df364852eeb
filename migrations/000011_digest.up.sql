-- The daily digest: each org's settings for it, who asked to stop getting
-- it, and the install's own signing key for one-click unsubscribe links.
--
-- digest_settings has at most one row per org; an org without one gets the
-- defaults (on, at 08:00 in the org's time zone, only when something is
-- over, to the owners and admins), so no row is written until an admin
-- saves the form.
--
-- digest_unsubscribes is per user and org: unsubscribing from one org's
-- digest leaves the others alone, and a user who is removed from an org and
-- invited back stays unsubscribed.
--
-- app_secrets holds random keys made by the install itself on first use,
-- so that a self-hosted install needs no secret in its configuration. The
-- unsubscribe links are signed with one (HMAC-SHA256): whoever holds the
-- key can unsubscribe anyone, so the fenced web role cannot read it.
-- See docs/digest.md.

CREATE TABLE digest_settings (
    org_id     bigint PRIMARY KEY REFERENCES orgs (id) ON DELETE CASCADE,
    enabled    boolean NOT NULL DEFAULT true,
    send_hour  smallint NOT NULL DEFAULT 8 CHECK (send_hour BETWEEN 0 AND 23),
    -- 'over': only when a budget is over (or forecast over); 'always': every day.
    send_when  text NOT NULL DEFAULT 'over' CHECK (send_when IN ('over', 'always')),
    -- 'admins': the owners and admins; 'members': every member.
    recipients text NOT NULL DEFAULT 'admins' CHECK (recipients IN ('admins', 'members')),
    updated_by bigint REFERENCES users (id) ON DELETE SET NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE digest_unsubscribes (
    org_id     bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);

CREATE TABLE app_secrets (
    name       text PRIMARY KEY,
    secret     bytea NOT NULL CHECK (length(secret) >= 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

GRANT SELECT, INSERT, UPDATE, DELETE ON digest_settings, digest_unsubscribes TO burnrate_app;
-- Default privileges from 000001 granted it; the fenced role has no business here.
REVOKE ALL ON app_secrets FROM burnrate_app;

ALTER TABLE digest_settings ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON digest_settings TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE digest_unsubscribes ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON digest_unsubscribes TO burnrate_app USING (org_id = burnrate_org_id());
