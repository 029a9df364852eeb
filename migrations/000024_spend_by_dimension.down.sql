DROP TRIGGER daily_spend_by_insert ON daily_spend;
DROP TRIGGER daily_spend_by_update ON daily_spend;
DROP TRIGGER daily_spend_by_delete ON daily_spend;
DROP FUNCTION daily_spend_by_apply();
DROP TABLE daily_spend_by;
