package storetest

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store"
)

// AbandonedImport creates an import of orgID as a server that then dies
// leaves it: processing, its connection gone. It returns once Postgres has
// seen the connection end (and so released everything it held).
func AbandonedImport(t testing.TB, st *store.Store, orgID int64) store.Import {
	t.Helper()
	ctx := context.Background()
	u, err := url.Parse(st.Pool().Config().ConnString())
	if err != nil {
		t.Fatalf("storetest.AbandonedImport: %v", err)
	}
	name := fmt.Sprintf("burnrate-abandoned-%d", seq.Add(1))
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	dying, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("storetest.AbandonedImport: %v", err)
	}
	var imp store.Import
	err = dying.Conn(ctx, func(c *store.Store) error {
		imp, err = c.CreateImport(ctx, store.NewImport{OrgID: orgID, FileName: name + ".csv", Via: "test"})
		return err
	})
	dying.Close()
	if err != nil {
		t.Fatalf("storetest.AbandonedImport: %v", err)
	}
	WaitConnectionsGone(t, st, name)
	return imp
}

// WaitConnectionsGone waits until no backend of the database has
// application_name name: a closed or terminated connection's backend exits
// a moment after the client sees it end.
func WaitConnectionsGone(t testing.TB, st *store.Store, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := st.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&n)
		if err != nil {
			t.Fatalf("storetest: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("storetest: %d connections named %s still open after 30s", n, name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
