package web_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// roundRobin sends each request to the next server in turn, like a load
// balancer without sticky sessions.
type roundRobin struct {
	next    atomic.Int64
	servers []http.Handler
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rr.servers[int(rr.next.Add(1))%len(rr.servers)].ServeHTTP(w, r)
}

// TestTwoInstancesOneDatabase runs two app instances, each with its own
// connection pool, on one database behind a round-robin balancer: sign-up,
// log-in, forms with their CSRF tokens, an upload, its progress polled from
// the other instance, and the dashboard (with its per-process cache) all
// work whichever instance a request reaches.
func TestTwoInstancesOneDatabase(t *testing.T) {
	t.Parallel()
	dbURL := storetest.URL(t)
	open := func() *web.Server {
		st, err := store.Open(context.Background(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return newTestServer(st, web.Config{Now: testClock})
	}
	a, b := open(), open()
	lb := &roundRobin{servers: []http.Handler{a, b}}

	jar, _ := cookiejar.New(nil)
	lead := &client{t: t, srv: lb, jar: jar}
	lead.get("/signup")
	rec := lead.post("/signup", url.Values{"name": {"Ann Lead"}, "email": {"ann@example.com"},
		"password": {"long enough pw"}, "org_name": {"Two Boxes"}})
	wantStatus(t, rec, http.StatusSeeOther)
	for range 4 { // both instances, twice: the session is in the database
		if rec := lead.get("/dashboard"); rec.Code != http.StatusOK {
			t.Fatalf("dashboard after sign-up: %d", rec.Code)
		}
	}
	// A page from one instance, its form posted to the other.
	lead.get("/budgets")
	rec = lead.post("/budgets", url.Values{"name": {"Cloud"}, "amount": {"1000"}, "currency": {"USD"}, "period": {"monthly"}})
	if rec.Code >= 400 {
		t.Fatalf("budget form posted to the other instance: %d %s", rec.Code, rec.Body.String())
	}

	// The empty dashboard is cached by whichever instance answered; an
	// import through the other must still show on both.
	lead.get("/dashboard")
	lead.get("/dashboard")

	var file bytes.Buffer
	if err := curgen.Generate(&file, 60_000, 11); err != nil {
		t.Fatal(err)
	}
	lead.get("/imports")
	uploader := &client{t: t, srv: a, jar: lead.jar, csrf: lead.csrf}
	poller := &client{t: t, srv: b, jar: lead.jar}
	const key = "k-two-instances"
	uploaded := make(chan int, 1)
	go func() {
		rec := uploader.postFile("/imports", "file", "cur.csv", file.Bytes(), url.Values{"upload_key": {key}})
		uploaded <- rec.Code
	}()
	sawRows := false
	deadline := time.After(2 * time.Minute)
poll:
	for {
		select {
		case code := <-uploaded:
			if code != http.StatusOK {
				t.Fatalf("upload: %d", code)
			}
			break poll
		case <-deadline:
			t.Fatal("upload did not finish in 2 minutes")
		default:
		}
		if body := poller.get("/imports/progress?key=" + key).Body.String(); strings.Contains(body, "rows read") {
			sawRows = true
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !sawRows {
		t.Error("the other instance never saw the upload's progress")
	}
	if body := poller.get("/imports/progress?key=" + key).Body.String(); strings.Contains(body, "rows read") {
		t.Errorf("progress outlived its upload: %q", body)
	}
	for range 2 {
		rec := lead.get("/dashboard")
		wantStatus(t, rec, http.StatusOK)
		if doc(t, rec).Find(`[data-testid=upload-cta]`).Length() != 0 {
			t.Fatal("an instance still shows the empty dashboard after the other imported")
		}
	}
}
