package store_test

import (
	"context"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// BenchmarkFenced is what every request to the app pays for its fence: a
// connection fenced to an org for a person (the org, the person and, since
// 000036, the person's orgs), handed to a handler that asks nothing, and
// reset.
func BenchmarkFenced(b *testing.B) {
	st := storetest.New(b)
	ctx := context.Background()
	org, user := storetest.Org(b, st, storetest.OrgOpts{})
	for range 3 {
		storetest.Org(b, st, storetest.OrgOpts{Owner: &user})
	}
	for b.Loop() {
		if err := st.Fenced(ctx, org.ID, user.ID, func(*store.Store) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
