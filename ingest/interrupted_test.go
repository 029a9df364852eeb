package ingest

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
)

// stallingFile is a CSV that stops mid-file until released, as a slow
// upload does: header and some rows, then it waits, then more rows.
type stallingFile struct {
	r       io.Reader
	stalled chan struct{} // closed when it starts waiting
	release chan struct{}
	once    bool
}

func newStallingFile() *stallingFile {
	var b strings.Builder
	b.WriteString("BilledCost,ChargePeriodStart,BillingCurrency,ProviderName\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "1.5,2026-03-%02d 10:00:00,USD,Stalled\n", i%28+1)
	}
	return &stallingFile{r: strings.NewReader(b.String()), stalled: make(chan struct{}), release: make(chan struct{})}
}

func (f *stallingFile) Read(p []byte) (int, error) {
	n, err := f.r.Read(p[:min(len(p), 4096)])
	if err == io.EOF && !f.once {
		f.once = true
		close(f.stalled)
		<-f.release
		f.r = strings.NewReader(strings.Repeat("1.5,2026-03-01 10:00:00,USD,Stalled\n", 100))
		return n, nil
	}
	return n, err
}

// TestImportWhoseConnectionDiesIsFailedBySweep interrupts a real import
// mid-file by terminating its database connection, as a server killed with
// -9 loses it: the import cannot record its own failure. While it runs, a
// sweep leaves it alone; once its connection is gone, the sweep marks it
// failed with InterruptedMessage, and nothing of it was written.
func TestImportWhoseConnectionDiesIsFailedBySweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	org, _ := storetest.Org(t, st, storetest.OrgOpts{})
	// The importing server: its own pool, with a name to find its
	// connection by.
	u, err := url.Parse(st.Pool().Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", "burnrate-importer-under-test")
	u.RawQuery = q.Encode()
	server, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	file := newStallingFile()
	done := make(chan error, 1)
	go func() {
		_, err := NewImporter(server, testPrices, testGPUs).Import(ctx, ImportRequest{Org: org, FileName: "stalled.csv", Via: "test"}, file)
		done <- err
	}()
	<-file.stalled

	// Mid-file: a sweep from another server leaves the live import alone.
	if failed, err := FailInterrupted(ctx, st); err != nil || len(failed) != 0 {
		t.Fatalf("sweep during a live import failed %+v (%v), want none", failed, err)
	}
	imps, err := st.Imports(ctx, org.ID, 10)
	if err != nil || len(imps) != 1 || imps[0].Status != store.ImportProcessing {
		t.Fatalf("during the import: %+v, %v; want one import processing", imps, err)
	}

	if _, err := st.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`,
		"burnrate-importer-under-test"); err != nil {
		t.Fatal(err)
	}
	close(file.release)
	if err := <-done; err == nil {
		t.Fatal("an import whose connection was terminated succeeded")
	}
	storetest.WaitConnectionsGone(t, st, "burnrate-importer-under-test")
	if got, _ := st.Import(ctx, org.ID, imps[0].ID); got.Status != store.ImportProcessing {
		t.Fatalf("the importer recorded %q itself; the test needs it unable to, as after a crash", got.Status)
	}

	failed, err := FailInterrupted(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0].ID != imps[0].ID || failed[0].Status != store.ImportFailed || failed[0].Error != InterruptedMessage {
		t.Fatalf("sweep after the connection died = %+v, want import %d failed with %q", failed, imps[0].ID, InterruptedMessage)
	}
	var rows int
	if err := st.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM charges WHERE org_id = $1) + (SELECT count(*) FROM daily_spend WHERE org_id = $1)`, org.ID).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("rows written by the interrupted import: %d (%v), want 0", rows, err)
	}
}
