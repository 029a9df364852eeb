package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/poll"
	"github.com/burnrate/burnrate/store"
)

// WaitJobsDone waits, up to within, until no River job of the given kinds
// is still to run (available, scheduled, retryable, running or pending):
// whatever those jobs would do has been done. A test that asserts something
// did not happen twice waits for this rather than for a fixed time.
func WaitJobsDone(t testing.TB, st *store.Store, within time.Duration, kinds ...string) {
	t.Helper()
	var left int
	poll.Until(t, within, "the jobs "+strings.Join(kinds, ", ")+" to finish", func() bool {
		if err := st.Pool().QueryRow(context.Background(), `SELECT count(*) FROM river_job
			WHERE kind = ANY($1) AND state NOT IN ('completed', 'discarded', 'cancelled')`, kinds).Scan(&left); err != nil {
			t.Fatal(err)
		}
		return left == 0
	})
}
