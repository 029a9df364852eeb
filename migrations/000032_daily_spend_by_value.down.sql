DROP INDEX daily_spend_by_value;
