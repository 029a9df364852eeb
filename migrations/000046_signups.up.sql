-- Where the server sends mail, a sign-up waits here until the link mailed
-- to its address is used: the sign-up page then answers "check your inbox"
-- whether or not the address has an account (its owner is mailed a notice
-- instead), so that it tells a stranger nothing about which addresses use
-- Burnrate. A row holds what the form said, the password already hashed,
-- until its link is used or for a day; the hourly cleanup deletes the rest.
-- Not an org's data: read by the public sign-up pages only.
CREATE TABLE signups (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text NOT NULL,
    name          text NOT NULL,
    org_name      text NOT NULL,
    password_hash text NOT NULL,
    token_hash    bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX signups_token_hash_key ON signups (token_hash);
CREATE INDEX signups_expires_at_idx ON signups (expires_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON signups TO burnrate_app;
