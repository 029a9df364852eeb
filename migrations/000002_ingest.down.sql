-- Drops ingestion's tables and everything imported.
DROP TABLE IF EXISTS daily_spend, charges, imports;
