DROP FUNCTION burnrate_fence();
DROP POLICY own_orgs ON orgs;
CREATE POLICY own_orgs ON orgs FOR SELECT TO burnrate_app
    USING (id IN (SELECT org_id FROM memberships WHERE user_id = burnrate_user_id()));
DROP FUNCTION burnrate_user_org_ids();
