-- Budget threshold alerts go out once per threshold per period, however many
-- processes evaluate budgets and however often. budget_alerts already holds
-- one row per (budget, period, threshold) crossed, under its primary key;
-- the evaluation that inserts a row claims its alert in the same statement
-- (INSERT … ON CONFLICT … RETURNING), so of two evaluations running at once
-- the second waits on the first's row and then finds it taken. Run in the
-- transaction that queues the message, a claim commits with the message or
-- not at all.
--
-- notified_at is when an evaluation claimed the crossing for a message.
-- Rows recorded before this version (when someone opened a budget page) have
-- none: those crossings were shown on a page but told to nobody, so the
-- next evaluation in their period claims them. spent is the budget's spend
-- in the period at the claim, for the alert history.

ALTER TABLE budget_alerts
    ADD COLUMN IF NOT EXISTS notified_at timestamptz,
    ADD COLUMN IF NOT EXISTS spent numeric;
