-- Drops the foundation. The role burnrate_app is cluster-wide and may serve
-- other databases of the same cluster, so it is left in place.
DROP TABLE IF EXISTS login_failures, api_tokens, invites, sessions, memberships, orgs, users;
DROP FUNCTION IF EXISTS burnrate_org_id(), burnrate_user_id();
