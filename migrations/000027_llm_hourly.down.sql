DROP TABLE llm_hourly;
