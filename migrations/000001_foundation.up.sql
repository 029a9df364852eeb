-- Foundation: people, organisations, who belongs where, and how they prove it.
--
-- Every tenant table has org_id as the first column of its primary key and of
-- its indexes, so the schema can be distributed by org_id (Citus) unchanged.
-- Row-level security is the second fence behind the org_id that every store
-- query already takes: web requests run as the role burnrate_app with the
-- setting burnrate.org_id, and the policies below hide every other org's rows.
-- The connecting (owner) role bypasses RLS; it is used by migrations, the CLI,
-- log-in and background work, which are not scoped to one org.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'burnrate_app') THEN
        CREATE ROLE burnrate_app NOLOGIN;
    END IF;
END
$$;
GRANT burnrate_app TO CURRENT_USER;

-- burnrate_org_id is the org a fenced session is scoped to. It fails closed:
-- a fenced session without the setting sees nothing.
CREATE FUNCTION burnrate_org_id() RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(current_setting('burnrate.org_id', true), '')::bigint $$;

-- burnrate_user_id is the person a fenced session acts for (none for API
-- tokens): they may also see their own memberships and the orgs they are in,
-- for the org switcher, and nothing else of other orgs.
CREATE FUNCTION burnrate_user_id() RETURNS bigint
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(current_setting('burnrate.user_id', true), '')::bigint $$;

CREATE TABLE users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text NOT NULL,
    name          text NOT NULL DEFAULT '',
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- Emails are compared case-insensitively: Ann@x.com and ann@x.com are one person.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE orgs (
    id                     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug                   text NOT NULL UNIQUE,
    name                   text NOT NULL,
    time_zone              text NOT NULL DEFAULT 'UTC',
    currency               text NOT NULL DEFAULT 'USD',
    team_tag_key           text NOT NULL DEFAULT 'team',
    -- Plan fields are filled by Stripe billing; self-hosted installs stay on
    -- 'self-hosted' with every feature unlocked.
    plan                   text NOT NULL DEFAULT 'free',
    plan_status            text NOT NULL DEFAULT 'active',
    stripe_customer_id     text,
    stripe_subscription_id text,
    plan_renews_at         timestamptz,
    created_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    org_id     bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id    bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);
-- "Which orgs am I in" is asked at every log-in; it is the one lookup that
-- starts from the user rather than the org.
CREATE INDEX memberships_user_id_idx ON memberships (user_id);

-- Sessions live in Postgres so that any number of app instances can serve a
-- user. The cookie holds "id.secret"; only sha256(secret) is stored.
CREATE TABLE sessions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    secret_hash bytea NOT NULL,
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    org_id      bigint REFERENCES orgs (id) ON DELETE SET NULL,
    flash       text NOT NULL DEFAULT '',
    user_agent  text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);

CREATE TABLE invites (
    org_id      bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id          bigint GENERATED ALWAYS AS IDENTITY,
    email       text NOT NULL,
    role        text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    token_hash  bytea NOT NULL,
    invited_by  bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz,
    PRIMARY KEY (org_id, id)
);
-- The accept link carries only the token, so it is looked up across orgs.
CREATE UNIQUE INDEX invites_token_hash_key ON invites (token_hash);

CREATE TABLE api_tokens (
    org_id       bigint NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    id           bigint GENERATED ALWAYS AS IDENTITY,
    name         text NOT NULL,
    prefix       text NOT NULL,
    token_hash   bytea NOT NULL,
    created_by   bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz,
    PRIMARY KEY (org_id, id)
);
-- A bearer token arrives without its org: looked up by hash across orgs.
CREATE UNIQUE INDEX api_tokens_token_hash_key ON api_tokens (token_hash);

-- Failed log-ins, counted per key (email or client address) to rate-limit
-- password guessing across every app instance.
CREATE TABLE login_failures (
    key text NOT NULL,
    at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_key_at_idx ON login_failures (key, at);

GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO burnrate_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO burnrate_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO burnrate_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO burnrate_app;

ALTER TABLE orgs ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON orgs TO burnrate_app USING (id = burnrate_org_id());
-- Reading (never writing) the other orgs one belongs to: the switcher.
CREATE POLICY own_orgs ON orgs FOR SELECT TO burnrate_app
    USING (id IN (SELECT org_id FROM memberships WHERE user_id = burnrate_user_id()));
ALTER TABLE memberships ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON memberships TO burnrate_app USING (org_id = burnrate_org_id());
CREATE POLICY own_memberships ON memberships FOR SELECT TO burnrate_app USING (user_id = burnrate_user_id());
ALTER TABLE invites ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON invites TO burnrate_app USING (org_id = burnrate_org_id());
ALTER TABLE api_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_fence ON api_tokens TO burnrate_app USING (org_id = burnrate_org_id());
