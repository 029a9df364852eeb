package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/burnrate/burnrate/poll"
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
	poll.Until(t, 5*time.Second, "every connection back in the pool", func() bool { return b.st.Pool().Stat().AcquiredConns() == 0 })
}

// within serves req through c, failing the test if the answer takes longer
// than a few seconds: each of these numbers once took minutes (or panicked),
// and a regression must fail fast, not hang.
func (c *client) within(req *http.Request) *httptest.ResponseRecorder {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), 5*time.Second)
	defer cancel()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- c.do(req.WithContext(ctx)) }()
	select {
	case rec := <-done:
		return rec
	case <-time.After(5 * time.Second):
		// Not t.Fatal, nor a panic: the test's cleanup would wait for the
		// stuck request to give its connection back, for minutes. Stop.
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s %.80s took more than 5s; exiting rather than waiting for it\n",
			c.t.Name(), req.Method, req.URL)
		os.Exit(1)
		return nil
	}
}

func (c *client) apiWithin(method, path, token, body string) (*httptest.ResponseRecorder, map[string]any) {
	c.t.Helper()
	rec := c.within(apiRequest(method, path, token, body))
	var got map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &got)
	return rec, got
}

// wantFieldError checks a JSON API answer is a 422 naming field and the bound.
func wantFieldError(t *testing.T, rec *httptest.ResponseRecorder, got map[string]any, field string) {
	t.Helper()
	msg, _ := got["error"].(string)
	if rec.Code != http.StatusUnprocessableEntity || got["field"] != field || !strings.Contains(msg, "out of range") {
		t.Fatalf("status %d, body %s; want 422 naming %s as out of range", rec.Code, rec.Body, field)
	}
}

func TestHugeNumbersInAPIBudgets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	c := b.client(t)
	for _, amount := range []string{`"1e999999999"`, `1e999999999`, `"1e131000"`, `-1e999999999`, `"` + strings.Repeat("9", 900<<10) + `"`} {
		// 900 KB of digits: under the 1 MB a JSON body may hold (a larger
		// body is refused with 413 before it is parsed), so the parser's
		// own length bound answers.
		rec, got := c.apiWithin(http.MethodPost, "/api/v1/budgets", token, `{"name":"x","amount":`+amount+`}`)
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		if got["field"] != "amount" {
			t.Fatalf("amount %.30s: %s, want the field named", amount, rec.Body)
		}
	}
	rec, got := c.apiWithin(http.MethodPost, "/api/v1/budgets", token, `{"name":"x","amount":"1e999999999"}`)
	wantFieldError(t, rec, got, "amount")
	if want := "money must be below 1,000,000,000,000,000"; !strings.Contains(got["error"].(string), want) {
		t.Fatalf("error %q does not give the bound %q", got["error"], want)
	}
	if bs, _ := b.st.Budgets(ctx(), org.ID); len(bs) != 0 {
		t.Fatalf("saved %d budget(s)", len(bs))
	}
}

func TestHugeNumbersInBudgetForm(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	c.get("/budgets/new")
	form := url.Values{"name": {"Huge"}, "amount": {"1e999999999"}, "_csrf": {c.csrf}}
	rec := c.within(newFormRequest("/budgets", form))
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	d := doc(t, rec)
	if msg := d.Find(`[data-testid=field-error]`).Text(); !strings.Contains(msg, "out of range: money must be below 1,000,000,000,000,000") {
		t.Fatalf("field errors = %q", msg)
	}
	if v, _ := d.Find(`input[name=name]`).Attr("value"); v != "Huge" {
		t.Fatalf("the form was not re-rendered with what was typed (name %q)", v)
	}
	if bs, _ := b.st.Budgets(ctx(), org.ID); len(bs) != 0 {
		t.Fatalf("saved %d budget(s)", len(bs))
	}
}

func TestHugeNumbersInBreakEven(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	c := b.client(t)
	c.login(owner.Email)

	rec := c.within(httptest.NewRequest(http.MethodGet, "/breakeven?overhead_month_usd=1e10000000", nil))
	wantStatus(t, rec, http.StatusUnprocessableEntity)
	if msg := doc(t, rec).Find(`[data-testid=breakeven-errors]`).Text(); !strings.Contains(msg, "Fixed overhead") || !strings.Contains(msg, "out of range") {
		t.Fatalf("errors = %q", msg)
	}

	base := `{"model":"gpt-4.1-mini","input_tokens":3e8,"output_tokens":1e8`
	for field, body := range map[string]string{
		"overhead_month_usd": base + `,"overhead_month_usd":"1e10000000"}`,
		"gpu_price":          base + `,"gpu":"H100","gpu_price":1e10000000}`,
		"input_tokens":       `{"model":"gpt-4.1-mini","input_tokens":1e308,"output_tokens":1}`,
		"throughput":         base + `,"gpu":"H100","throughput":1e308}`,
		"peak_factor":        base + `,"peak_factor":1e308}`,
	} {
		rec, got := c.apiWithin(http.MethodPost, "/api/v1/breakeven", token, body)
		wantFieldError(t, rec, got, field)
	}
}

func TestHugeNumbersInAdvisor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	c := b.client(t)
	c.login(owner.Email)

	for _, path := range []string{"/advisor?tokens=1e308", "/advisor?job=full-finetune&model=llama-3.1-8b&tokens=1e308"} {
		rec := c.within(httptest.NewRequest(http.MethodGet, path, nil))
		wantStatus(t, rec, http.StatusUnprocessableEntity)
		if msg := doc(t, rec).Find(`[data-testid=advice-errors]`).Text(); !strings.Contains(msg, "Tokens") || !strings.Contains(msg, "out of range") {
			t.Fatalf("%s: errors = %q", path, msg)
		}
	}
	// An assumption big enough to make the hours infinite.
	rec := c.within(httptest.NewRequest(http.MethodGet, "/advisor?training_flops_factor=1e308", nil))
	wantStatus(t, rec, http.StatusUnprocessableEntity)

	for field, body := range map[string]string{
		"tokens":                            `{"job":"full-finetune","model":"llama-3.1-8b","tokens":1e308}`,
		"params":                            `{"job":"full-finetune","params":"1e999999999","tokens":1e9}`,
		"assumptions.training_flops_factor": `{"job":"full-finetune","model":"llama-3.1-8b","tokens":1e9,"assumptions":{"training_flops_factor":1e308}}`,
		"deadline_hours":                    `{"job":"full-finetune","model":"llama-3.1-8b","tokens":1e9,"deadline_hours":1e308}`,
	} {
		rec, got := c.apiWithin(http.MethodPost, "/api/v1/advise", token, body)
		wantFieldError(t, rec, got, field)
	}
	// Still serving, and still computing.
	wantStatus(t, c.within(httptest.NewRequest(http.MethodGet, "/advisor?tokens=1B", nil)), http.StatusOK)
}

// TestLargestBudgetKeepsPagesSmall: a budget at the top of money's range
// renders like any other, and the 1e131000 one that made the dashboard
// 8.7 MB can no longer be saved.
func TestLargestBudgetKeepsPagesSmall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner, token, _ := demoOrg(t, b)
	c := b.client(t)
	c.login(owner.Email)
	rec, got := c.apiWithin(http.MethodPost, "/api/v1/budgets", token, `{"name":"Infinite","amount":"1e131000"}`)
	wantFieldError(t, rec, got, "amount")

	normal := c.within(httptest.NewRequest(http.MethodGet, "/dashboard", nil)).Body.Len()
	rec, _ = c.apiWithin(http.MethodPost, "/api/v1/budgets", token, `{"name":"Largest","amount":"999999999999999.999999999999999999999999"}`)
	wantStatus(t, rec, http.StatusCreated)
	bs, _ := b.st.Budgets(ctx(), org.ID)
	for _, path := range []string{"/dashboard", "/budgets"} {
		rec := c.within(httptest.NewRequest(http.MethodGet, path, nil))
		wantStatus(t, rec, http.StatusOK)
		if path == "/dashboard" && rec.Body.Len() > normal+20_000 {
			t.Fatalf("dashboard grew from %d to %d bytes with one large budget", normal, rec.Body.Len())
		}
		if rec.Body.Len() > 2<<20 {
			t.Fatalf("%s is %d bytes", path, rec.Body.Len())
		}
	}
	for _, bud := range bs {
		if bud.Name == "Largest" {
			wantStatus(t, c.within(httptest.NewRequest(http.MethodGet, "/budgets/"+itoa(bud.ID), nil)), http.StatusOK)
		}
	}
}
