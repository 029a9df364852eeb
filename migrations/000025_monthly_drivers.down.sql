DROP TRIGGER monthly_drivers_insert ON daily_spend;
DROP TRIGGER monthly_drivers_update ON daily_spend;
DROP TRIGGER monthly_drivers_delete ON daily_spend;
DROP FUNCTION monthly_drivers_apply();
DROP TABLE monthly_drivers;
