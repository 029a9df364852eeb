-- Numbers a user types are bounded by the quantity parser before they reach
-- the database (money below 10^15 USD, GPU counts below 10^5). Earlier
-- versions accepted any decimal, so a budget of 1e131000 could be stored and
-- every page that drew it grew by megabytes. Values past the bounds are
-- brought to the largest the parser accepts (they were never a real amount),
-- and CHECK constraints keep the database to the same bounds from now on.

UPDATE budgets SET amount = 999999999999999.99 WHERE amount >= 1e15;
ALTER TABLE budgets ADD CONSTRAINT budgets_amount_bounded CHECK (amount < 1e15);

UPDATE gpu_price_overrides SET price_on_demand = 999999999999999.99 WHERE price_on_demand >= 1e15;
UPDATE gpu_price_overrides SET price_spot = 999999999999999.99 WHERE price_spot >= 1e15;
UPDATE gpu_price_overrides SET gpu_count = 99999 WHERE gpu_count >= 1e5;
ALTER TABLE gpu_price_overrides
    ADD CONSTRAINT gpu_price_overrides_bounded
    CHECK (price_on_demand < 1e15 AND price_spot < 1e15 AND gpu_count < 1e5);

UPDATE llm_price_overrides SET input_per_mtok = 999999999999999.99 WHERE input_per_mtok >= 1e15;
UPDATE llm_price_overrides SET output_per_mtok = 999999999999999.99 WHERE output_per_mtok >= 1e15;
UPDATE llm_price_overrides SET cached_input_per_mtok = 999999999999999.99 WHERE cached_input_per_mtok >= 1e15;
ALTER TABLE llm_price_overrides
    ADD CONSTRAINT llm_price_overrides_bounded
    CHECK (input_per_mtok < 1e15 AND output_per_mtok < 1e15 AND cached_input_per_mtok < 1e15);
