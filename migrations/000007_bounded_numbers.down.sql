ALTER TABLE llm_price_overrides DROP CONSTRAINT IF EXISTS llm_price_overrides_bounded;
ALTER TABLE gpu_price_overrides DROP CONSTRAINT IF EXISTS gpu_price_overrides_bounded;
ALTER TABLE budgets DROP CONSTRAINT IF EXISTS budgets_amount_bounded;
