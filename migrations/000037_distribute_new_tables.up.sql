-- burnrate_distribute(table) distributes a new tenant table by org_id,
-- co-located with the others, when the database's tenant tables are
-- distributed by Citus ('burnrate citus distribute'), and does nothing on
-- one Postgres. A migration that adds a tenant table calls it right after
-- CREATE TABLE, before the table has foreign keys: a table with a foreign
-- key to a reference table (orgs, users) becomes a Citus-local table, which
-- Citus cannot then distribute, or turn back, when it has an identity
-- column (docs/operations.md, "Distributing by org").
CREATE FUNCTION burnrate_distribute(tbl regclass) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    distributed boolean;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN; -- no Citus
    END IF;
    EXECUTE 'SELECT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = $1 AND partmethod = ''h'')'
        INTO distributed USING 'imports'::regclass;
    IF distributed THEN
        EXECUTE 'SELECT create_distributed_table($1, ''org_id'', colocate_with => ''imports'')' USING tbl;
    END IF;
END
$$;
