DROP TRIGGER period_drivers_insert ON daily_spend;
DROP TRIGGER period_drivers_update ON daily_spend;
DROP TRIGGER period_drivers_delete ON daily_spend;
DROP FUNCTION period_drivers_apply();
DROP TABLE period_drivers;
