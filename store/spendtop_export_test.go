package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// SpendByDayTopWindows is SpendByDayTop as it was, with window functions
// over every day row, for the test that the query replacing it gives the
// same rows to the last digit.
func (s *Store) SpendByDayTopWindows(ctx context.Context, orgID int64, f SpendFilter, group Dimension, top TopGroups) ([]DaySpend, error) {
	if group != "" && !group.ValidGroup() {
		return nil, fmt.Errorf("spend by day: cannot group by %q", group)
	}
	args := []any{orgID}
	table, where, groupCol := f.rollup(&args, group)
	var query string
	if group == "" || top.N <= 0 {
		query = `
		SELECT day, currency, ` + groupCol + `, sum(` + f.Cost.column() + `), false, 0
		FROM ` + table + `
		WHERE ` + where + `
		GROUP BY 1, 2, 3
		ORDER BY 1, 2, 4 DESC, 3`
	} else {
		args = append(args, top.N, top.From, top.To)
		n, from, to := "$"+strconv.Itoa(len(args)-2), "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))
		// Groups are ranked by their spend in the limit's days, per
		// currency, ties by name; the rest are summed as one per day.
		// Window functions only, no joins: right after an import the
		// planner may have no statistics for the new rows, and a join of
		// the day rows with their groups became a nested loop, quadratic
		// in the number of groups. dense_rank gives each group its own
		// rank (the name breaks ties); first marks one row of each group,
		// to count the groups folded.
		query = `
		WITH d AS (
			SELECT day, currency, ` + groupCol + ` AS grp, sum(` + f.Cost.column() + `) AS amount
			FROM ` + table + `
			WHERE ` + where + `
			GROUP BY 1, 2, 3
		), g AS (
			SELECT day, currency, grp, amount,
				coalesce(sum(amount) FILTER (WHERE day BETWEEN ` + from + ` AND ` + to + `) OVER w, 0) AS ranked_by,
				bool_or(day BETWEEN ` + from + ` AND ` + to + `) OVER w AS in_range,
				row_number() OVER w = 1 AS first
			FROM d
			WINDOW w AS (PARTITION BY currency, grp)
		), r AS (
			SELECT *, dense_rank() OVER (PARTITION BY currency ORDER BY ranked_by DESC, grp) > ` + n + ` AS other
			FROM g
		), o AS (
			SELECT *, count(*) FILTER (WHERE first AND in_range AND other) OVER (PARTITION BY currency) AS folded
			FROM r
		)
		SELECT day, currency, CASE WHEN other THEN '' ELSE grp END, sum(amount), other, max(folded)::int
		FROM o
		GROUP BY 1, 2, 3, 5
		ORDER BY 1, 2, 5, 4 DESC, 3`
	}
	rows, err := s.q.Query(ctx, query, args...)
	if err != nil {
		return nil, mapError("spend by day", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (DaySpend, error) {
		var d DaySpend
		err := row.Scan(&d.Day, &d.Currency, &d.Group, &d.Amount, &d.Other, &d.OtherGroups)
		if !d.Other {
			d.OtherGroups = 0
		}
		return d, err
	})
	return out, mapError("spend by day", err)
}
