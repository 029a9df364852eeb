-- Drops ingestion's tables and everything imported.
DROP TABLE IF EXISTS column_mappings, daily_spend, charges, imports;
