-- LLM spend without a model (docs/data-model.md, "Spend without a model"):
-- the OpenAI and Anthropic cost reports bill by line item, and an export
-- grouped by project alone names no model. A view of spend by model shows
-- those rows as "OpenAI — model not billed" rather than among cloud spend,
-- which has no model either; it finds them through this partial index,
-- which holds only them (a few rows a day) and so costs imports next to
-- nothing. store.UnmodelledSources lists the same formats.
CREATE INDEX daily_spend_unmodelled_llm ON daily_spend (org_id, day)
    WHERE model = '' AND source IN ('openai-costs', 'anthropic-cost', 'anthropic-console-cost');
