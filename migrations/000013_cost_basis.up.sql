-- Two views of one bill. Azure exports the same month twice, as actual cost
-- (what the invoice says: a reservation bought is a purchase that month) and
-- as amortized cost (the purchase spread over the usage it covered), in
-- files with the same columns. The second replaced the first as a
-- restatement of the period. Now an import has a cost basis: '' (its rows
-- carry both views, billed and effective cost, as FOCUS and AWS CUR do),
-- 'billed' (an Azure actual-cost export) or 'amortized' (an Azure amortized
-- export). A file restates only the slices of its own basis; the rows of
-- the other basis stay, and each view counts one of them, never both (see
-- docs/data-model.md, "Cost bases").
ALTER TABLE imports ADD COLUMN cost_basis text NOT NULL DEFAULT ''
    CHECK (cost_basis IN ('', 'billed', 'amortized'));
ALTER TABLE import_periods ADD COLUMN cost_basis text NOT NULL DEFAULT '';
ALTER TABLE import_periods DROP CONSTRAINT import_periods_pkey;
ALTER TABLE import_periods ADD PRIMARY KEY (org_id, source, billing_account_id, period_start, cost_basis, import_id);

-- Azure imports before this held whichever file came last, counted as both
-- views: they are taken as actual cost, which an amortized export of their
-- period will now stand beside instead of replacing.
UPDATE imports SET cost_basis = 'billed' WHERE source = 'azure-cost' AND status = 'succeeded';
UPDATE import_periods SET cost_basis = 'billed' WHERE source = 'azure-cost';
