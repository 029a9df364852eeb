DROP TRIGGER period_spend_by_insert ON daily_spend_by;
DROP TRIGGER period_spend_by_update ON daily_spend_by;
DROP TRIGGER period_spend_by_delete ON daily_spend_by;
DROP FUNCTION period_spend_by_apply();
DROP TABLE period_spend_by;
