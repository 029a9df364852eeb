-- Drops budgets and their alert history. Spend itself is untouched.
DROP TABLE IF EXISTS budget_alerts, budgets;
