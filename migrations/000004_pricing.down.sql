-- Drops every org's price overrides and saved scenarios.
DROP TABLE IF EXISTS scenarios, llm_price_overrides, gpu_price_overrides;
