-- The top groups' day rows of an unfiltered dashboard series: a few values
-- of one dimension over the range's days. The primary key leads with the
-- day, so reading them scanned every value's rows of the range (for a
-- dimension of fifty values, a year's view read three times the rows it
-- kept). Led by the value, each value is one short range of this index,
-- and the amounts are in it (docs/data-model.md, "Rollups").
CREATE INDEX daily_spend_by_value ON daily_spend_by (org_id, dim, currency, value, day)
    INCLUDE (billed, effective, rows);
