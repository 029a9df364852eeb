package spend

import (
	"context"
	"time"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/store"
)

// Warm asks what a view of the dashboard and the spend API ask, for org 0,
// which is no org's, so that a new connection has read the catalog and
// planned them before a user's view needs them (store.Options.Warm). It
// reads no rows.
func Warm(ctx context.Context, st *store.Store) error {
	today := budget.Day(time.Now(), time.UTC)
	f := store.SpendFilter{From: budget.AddDays(today, -89), To: today}
	for _, group := range []store.Dimension{"", store.DimService} {
		if _, err := Dashboard(ctx, st, 0, f, group, today); err != nil {
			return err
		}
	}
	_, _, err := Daily(ctx, st, 0, f, store.DimProvider)
	return err
}
