-- The rollups derived from charges and daily_spend (daily_spend_by,
-- month_to_date_drivers, month_to_date_spend_by, gpu_resource_daily) are
-- written by the store's own statements in the transaction that changes
-- charges, as daily_spend and llm_hourly already were (docs/data-model.md,
-- "Rollups"), no longer by triggers. Statement triggers with transition
-- tables cannot run on tables distributed by Citus (docs/operations.md,
-- "Distributing by org"), and the store knows each change as it makes it:
-- an import adds up its rows as they stream past, a deletion returns what
-- it took away. Nothing is recomputed here: the rollups are in step.
DROP TRIGGER daily_spend_by_insert ON daily_spend;
DROP TRIGGER daily_spend_by_update ON daily_spend;
DROP TRIGGER daily_spend_by_delete ON daily_spend;
DROP TRIGGER month_to_date_drivers_insert ON daily_spend;
DROP TRIGGER month_to_date_drivers_update ON daily_spend;
DROP TRIGGER month_to_date_drivers_delete ON daily_spend;
DROP TRIGGER month_to_date_spend_by_insert ON daily_spend_by;
DROP TRIGGER month_to_date_spend_by_update ON daily_spend_by;
DROP TRIGGER month_to_date_spend_by_delete ON daily_spend_by;
DROP TRIGGER gpu_resource_daily_update ON charges;
DROP TRIGGER gpu_resource_daily_delete ON charges;
DROP TRIGGER gpu_resource_daily_org_gone ON orgs;
DROP FUNCTION daily_spend_by_apply(), month_to_date_drivers_apply(), month_to_date_spend_by_apply(),
    gpu_resource_daily_sync(), gpu_resource_daily_org_gone();
