package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/savings"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// TestSavingsRefreshQueued: removing an import (page and API) and every
// write of a price override queue the refresh of the org's stored savings
// report, in the write's transaction, due a few seconds later: a write
// that fails queues nothing.
func TestSavingsRefreshQueued(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	b := &bundle{st: st, srv: web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{}),
		web.Config{Now: testClock})}
	org, owner := storetest.Org(t, st, storetest.OrgOpts{})
	_, token, _ := st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	sample, err := os.ReadFile(focusSample)
	if err != nil {
		t.Fatal(err)
	}
	first := int64(apiImport(t, b, token, "focus.csv", sample)["id"].(float64))
	second := int64(apiImport(t, b, token, "gcp.csv", mustRead(t, "../ingest/testdata/exports/gcp/202011_30c31bca571d9b7f3b2c8459dd8bc34a_2020-11-08_2020-11-11.csv"))["id"].(float64))
	// want counts the refreshes queued since the last step, due no sooner
	// than savings.RefreshDelay from now less a second, and clears them:
	// refreshes due in the same few seconds are one job.
	want := func(step string, queued int) {
		t.Helper()
		var n int
		if err := st.Pool().QueryRow(ctx(), `WITH d AS (DELETE FROM river_job WHERE kind = 'savings_refresh'
				AND (args->>'org_id')::bigint = $1 RETURNING scheduled_at)
			SELECT count(*) FROM d WHERE scheduled_at > now() + $2::interval`,
			org.ID, (savings.RefreshDelay - time.Second).String()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != queued {
			t.Errorf("%s: %d refreshes queued, due in %s, want %d", step, n, savings.RefreshDelay, queued)
		}
	}
	want("after the imports (each queues one, as in serve; refreshes due together are one job)", 1)

	c := b.client(t)
	c.login(owner.Email)
	c.get("/imports")
	wantStatus(t, c.post("/imports/"+itoa(first)+"/delete", nil), http.StatusSeeOther)
	want("removed in the browser", 1)
	wantStatus(t, c.post("/imports/"+itoa(first)+"/delete", nil), http.StatusConflict)
	want("removed again", 0)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodDelete, "/api/v1/imports/"+itoa(second), token, ""))
	wantStatus(t, rec, http.StatusNoContent)
	want("removed by the API", 1)

	c.get("/prices")
	wantStatus(t, c.post("/prices/gpu", url.Values{"provider": {"aws"}, "instance_type": {"p4d.24xlarge"}, "on_demand": {"20"}}), http.StatusSeeOther)
	want("GPU price added", 1)
	wantStatus(t, c.post("/prices/gpu", url.Values{"provider": {"aws"}, "instance_type": {"p4d.24xlarge"}}), http.StatusUnprocessableEntity)
	want("GPU price refused", 0)
	gpu, err := st.GPUPriceOverrides(ctx(), org.ID)
	if err != nil || len(gpu) != 1 {
		t.Fatalf("GPU prices: %v %v", gpu, err)
	}
	wantStatus(t, c.post("/prices/gpu/"+itoa(gpu[0].ID), url.Values{"on_demand": {"18"}}), http.StatusSeeOther)
	want("GPU price changed", 1)
	wantStatus(t, c.post("/prices/gpu/"+itoa(gpu[0].ID)+"/delete", nil), http.StatusSeeOther)
	want("GPU price deleted", 1)
	wantStatus(t, c.post("/prices/gpu/"+itoa(gpu[0].ID)+"/delete", nil), http.StatusNotFound)
	want("GPU price deleted again", 0)

	wantStatus(t, c.post("/prices/llm", url.Values{"model": {"gpt-4.1-mini"}, "input": {"0.1"}, "output": {"0.4"}}), http.StatusSeeOther)
	want("LLM price added", 1)
	llm, err := st.LLMPriceOverrides(ctx(), org.ID)
	if err != nil || len(llm) != 1 {
		t.Fatalf("LLM prices: %v %v", llm, err)
	}
	wantStatus(t, c.post("/prices/llm/"+itoa(llm[0].ID), url.Values{"model": {"gpt-4.1-mini"}, "input": {"0.2"}, "output": {"0.4"}}), http.StatusSeeOther)
	want("LLM price changed", 1)
	wantStatus(t, c.post("/prices/llm/"+itoa(llm[0].ID)+"/delete", nil), http.StatusSeeOther)
	want("LLM price deleted", 1)

	// The page reads (and stores) the report through the org's fence.
	wantStatus(t, c.get("/savings"), http.StatusOK)
	if _, ok, err := st.SavingsReport(ctx(), org.ID); !ok || err != nil {
		t.Errorf("the Savings page stored no report (%v)", err)
	}
}
