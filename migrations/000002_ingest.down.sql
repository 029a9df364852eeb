-- Drops ingestion's tables and everything imported.
DROP TABLE IF EXISTS column_mappings, import_periods, daily_spend, charges, imports;
