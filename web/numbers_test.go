package web_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestPanicUnderFenceRendersErrorPage: a handler that panics inside the
// fenced connection gets the full error page, nav and org switcher included
// (which query through that connection), the connection goes back to the
// pool, and the server keeps serving.
func TestPanicUnderFenceRendersErrorPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.AddPanicRoute()
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Panicky"})
	c := b.client(t)
	c.login(owner.Email)

	for range 3 {
		rec := c.get("/test/panic")
		wantStatus(t, rec, http.StatusInternalServerError)
		d := doc(t, rec)
		if d.Find(`[data-testid=error]`).Length() != 1 || d.Find(`[data-testid=org-switcher]`).Length() != 1 {
			t.Fatalf("error page without its layout:\n%s", rec.Body)
		}
		if d.Find(`input[name=slug][value="`+org.Slug+`"]`).Length() != 1 {
			t.Fatalf("the error page's org switcher does not list %s: it could not query", org.Slug)
		}
	}
	wantStatus(t, c.get("/budgets"), http.StatusOK)

	// Every connection is back in the pool, none was closed for misuse.
	deadline := time.Now().Add(5 * time.Second)
	for b.st.Pool().Stat().AcquiredConns() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("pool still has %d acquired connection(s)", b.st.Pool().Stat().AcquiredConns())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
