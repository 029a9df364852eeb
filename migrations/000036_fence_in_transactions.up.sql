-- The fence (docs/data-model.md, "Row-level security") without a subquery
-- in any policy, and with a way to set it for one transaction, so that it
-- holds on tables distributed by Citus (docs/operations.md, "Distributing
-- by org") as on one Postgres.

-- burnrate_user_org_ids is the orgs the fenced session's person belongs to,
-- which store.Fenced reads from memberships when it fences a session. The
-- own_orgs policy read them with a subquery, which Citus refuses in the
-- policies of the tables it manages. Unset, it is none (fails closed).
CREATE FUNCTION burnrate_user_org_ids() RETURNS bigint[]
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(NULLIF(current_setting('burnrate.user_org_ids', true), '')::bigint[], '{}') $$;

DROP POLICY own_orgs ON orgs;
CREATE POLICY own_orgs ON orgs FOR SELECT TO burnrate_app USING (id = ANY (burnrate_user_org_ids()));

-- burnrate_fence sets the session's fence (store.Fenced sets burnrate.org_id,
-- burnrate.user_id and burnrate.user_org_ids for the session) again with
-- SET LOCAL, for the transaction it is called in. Citus passes SET LOCAL on
-- to the workers that a transaction uses (with citus.propagate_set_commands
-- = 'local'), and never a session's settings: without this, the policies on
-- the workers' shards would see no org and hide every row. SET, not
-- set_config(): Citus passes on SET commands only.
CREATE FUNCTION burnrate_fence() RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    EXECUTE format('SET LOCAL burnrate.org_id = %L', coalesce(current_setting('burnrate.org_id', true), ''));
    EXECUTE format('SET LOCAL burnrate.user_id = %L', coalesce(current_setting('burnrate.user_id', true), ''));
    EXECUTE format('SET LOCAL burnrate.user_org_ids = %L', coalesce(current_setting('burnrate.user_org_ids', true), ''));
END
$$;
