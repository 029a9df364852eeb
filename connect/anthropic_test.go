package connect_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/connect"
)

// fakeAnthropic serves the Admin API's cost report and messages usage
// report in their documented shapes: {"data": [{"starting_at",
// "ending_at", "results"}], "has_more", "next_page"}, amounts in cents as
// decimal strings, perPage buckets a page.
type fakeAnthropic struct {
	t       testing.TB
	key     string
	perPage int

	mu       sync.Mutex
	cents    func(day time.Time, workspace, description string) string
	fail     []int
	requests []*http.Request
}

var (
	anthropicWorkspaces = []string{"wrkspc_research", "wrkspc_prod"}
	anthropicItems      = []string{"Claude Sonnet 4.5 Usage - Input Tokens", "Claude Sonnet 4.5 Usage - Output Tokens", "Web Search Usage"}
)

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	if r.Header.Get("X-Api-Key") != f.key || r.Header.Get("Anthropic-Version") != "2023-06-01" {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		return
	}
	if len(f.fail) > 0 {
		status := f.fail[0]
		f.fail = f.fail[1:]
		w.WriteHeader(status)
		fmt.Fprint(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		return
	}
	q := r.URL.Query()
	from, err1 := time.Parse(time.RFC3339, q.Get("starting_at"))
	to, err2 := time.Parse(time.RFC3339, q.Get("ending_at"))
	if err1 != nil || err2 != nil || q.Get("bucket_width") != "1d" {
		f.t.Errorf("bad window %s", r.URL.RawQuery)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var days []time.Time
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		days = append(days, d)
	}
	first := 0
	if p := q.Get("page"); p != "" {
		b, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(p, "page_"))
		d, _ := time.Parse(time.RFC3339, string(b))
		first = int(d.Sub(from) / (24 * time.Hour))
	}
	last := min(first+f.perPage, len(days))
	type bucket struct {
		StartingAt string `json:"starting_at"`
		EndingAt   string `json:"ending_at"`
		Results    []any  `json:"results"`
	}
	page := struct {
		Data     []bucket `json:"data"`
		HasMore  bool     `json:"has_more"`
		NextPage *string  `json:"next_page"`
	}{Data: []bucket{}}
	for _, d := range days[first:last] {
		b := bucket{StartingAt: d.Format(time.RFC3339), EndingAt: d.AddDate(0, 0, 1).Format(time.RFC3339), Results: []any{}}
		switch r.URL.Path {
		case "/v1/organizations/cost_report":
			for _, ws := range anthropicWorkspaces {
				for _, item := range anthropicItems {
					v := f.cents(d, ws, item)
					if v == "" {
						continue
					}
					res := map[string]any{"currency": "USD", "amount": v, "workspace_id": ws, "description": item,
						"cost_type": "tokens", "context_window": "0-200k", "model": "claude-sonnet-4-5-20250929",
						"service_tier": "standard", "token_type": "uncached_input_tokens"}
					if strings.HasPrefix(item, "Web") {
						res["cost_type"], res["token_type"], res["model"], res["context_window"], res["service_tier"] = "web_search", nil, nil, nil, nil
					}
					b.Results = append(b.Results, res)
				}
			}
		case "/v1/organizations/usage_report/messages":
			for _, ws := range anthropicWorkspaces {
				b.Results = append(b.Results, map[string]any{
					"uncached_input_tokens": 1_000_000, "cache_read_input_tokens": 500_000,
					"cache_creation":  map[string]any{"ephemeral_5m_input_tokens": 100_000, "ephemeral_1h_input_tokens": 0},
					"output_tokens":   200_000,
					"server_tool_use": map[string]any{"web_search_requests": 3},
					"api_key_id":      "apikey_01", "workspace_id": ws, "model": "claude-sonnet-4-5-20250929",
					"service_tier": "standard", "context_window": "0-200k",
				})
			}
		default:
			w.WriteHeader(http.StatusNotFound)
			return
		}
		page.Data = append(page.Data, b)
	}
	if last < len(days) {
		next := "page_" + base64.StdEncoding.EncodeToString([]byte(days[last].Format(time.RFC3339)))
		page.HasMore, page.NextPage = true, &next
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// dollars is what the fixture holds over [from, to), in dollars.
func (f *fakeAnthropic) dollars(from, to time.Time) decimal.Decimal {
	total := decimal.Zero
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		for _, ws := range anthropicWorkspaces {
			for _, item := range anthropicItems {
				if v := f.cents(d, ws, item); v != "" {
					total = total.Add(decimal.RequireFromString(v))
				}
			}
		}
	}
	return total.Shift(-2)
}

func (f *fakeAnthropic) takeRequests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

// baseCents: amounts in cents with fractions of a cent, as the report
// writes them.
func baseCents(d time.Time, ws, item string) string {
	switch {
	case strings.HasSuffix(item, "Input Tokens"):
		return fmt.Sprintf("%d.4567", 1000+d.Day()*len(ws))
	case strings.HasSuffix(item, "Output Tokens"):
		return fmt.Sprintf("%d.5", 250+d.Day())
	case ws == "wrkspc_prod":
		return "3"
	}
	return ""
}

func newFakeAnthropic(t *testing.T, b *bundle) *fakeAnthropic {
	f := &fakeAnthropic{t: t, key: "sk-ant-admin01-test-0123456789", perPage: 5, cents: baseCents}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	b.svc.AnthropicURL = srv.URL
	return f
}

// The cost report's cents become dollars to the cent, across pages and a
// 429; the next day's run replaces the restated days; the same answer
// again is a no-op.
func TestAnthropicCostBackfillAndRestate(t *testing.T) {
	b := newBundle(t)
	f := newFakeAnthropic(t, b)
	c := b.create(t, connect.Input{Name: "Claude", Kind: connect.KindAnthropic, APIKey: f.key, StartDate: "2026-11-01"})
	f.fail = []int{http.StatusTooManyRequests}
	res := syncNow(t, b, c.ID)
	from, to := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	if got, want := b.billed(t), f.dollars(from, to); !got.Equal(want) {
		t.Fatalf("billed %s, want the fixture's %s (cents / 100)", got, want)
	}
	if res.Rows != 20*5 {
		t.Fatalf("rows %d, want 100", res.Rows)
	}
	reqs := f.takeRequests()
	if len(reqs) != 1+4 {
		t.Fatalf("%d requests, want one refused and 4 pages", len(reqs))
	}
	for i, r := range reqs {
		q := r.URL.Query()
		if r.URL.Path != "/v1/organizations/cost_report" || q.Get("starting_at") != "2026-11-01T00:00:00Z" || q.Get("ending_at") != "2026-11-21T00:00:00Z" ||
			q.Get("limit") != "31" || !slices.Equal(q["group_by[]"], []string{"workspace_id", "description"}) {
			t.Errorf("request %d: %s", i, r.URL)
		}
		if i >= 2 && !strings.HasPrefix(q.Get("page"), "page_") {
			t.Errorf("request %d carries no page token: %s", i, r.URL)
		}
	}

	b.now = b.now.Add(24 * time.Hour)
	f.cents = func(d time.Time, ws, item string) string {
		if d.Day() == 19 && ws == "wrkspc_prod" && strings.HasSuffix(item, "Output Tokens") {
			return "99999.99"
		}
		return baseCents(d, ws, item)
	}
	syncNow(t, b, c.ID)
	if got, want := b.billed(t), f.dollars(from, to.AddDate(0, 0, 1)); !got.Equal(want) {
		t.Fatalf("billed %s after the restatement, want %s", got, want)
	}
	if res := syncNow(t, b, c.ID); !res.Imports[0].Duplicate {
		t.Fatalf("the same answer again: %+v", res.Imports[0])
	}
	imps, err := b.st.Imports(context.Background(), b.org.ID, 10)
	if err != nil || imps[0].Via != "connection Claude" || imps[0].Source != "anthropic-cost" {
		t.Fatalf("history %+v %v", imps, err)
	}
}

func TestAnthropicUsage(t *testing.T) {
	b := newBundle(t)
	f := newFakeAnthropic(t, b)
	c := b.create(t, connect.Input{Name: "Claude tokens", Kind: connect.KindAnthropic, APIKey: f.key, StartDate: "2026-11-18", Data: connect.DataUsage})
	res := syncNow(t, b, c.ID)
	if res.Rows != 3*2 {
		t.Fatalf("rows %d", res.Rows)
	}
	r := f.takeRequests()[0]
	if r.URL.Path != "/v1/organizations/usage_report/messages" ||
		!slices.Equal(r.URL.Query()["group_by[]"], []string{"workspace_id", "api_key_id", "model", "service_tier", "context_window"}) {
		t.Fatalf("request %s", r.URL)
	}
	var in, out, cached int64
	err := b.st.Pool().QueryRow(context.Background(), `SELECT sum(x_input_tokens), sum(x_output_tokens), sum(x_cached_tokens) FROM charges WHERE org_id = $1`, b.org.ID).Scan(&in, &out, &cached)
	if err != nil {
		t.Fatal(err)
	}
	// Input counts uncached, cache reads and cache writes.
	if in != 6*1_600_000 || out != 6*200_000 || cached != 6*500_000 {
		t.Fatalf("tokens in %d out %d cached %d", in, out, cached)
	}
	if !b.billed(t).IsPositive() {
		t.Fatal("usage was not priced")
	}
}

func TestAnthropicRefused(t *testing.T) {
	b := newBundle(t)
	newFakeAnthropic(t, b)
	c := b.create(t, connect.Input{Name: "Claude", Kind: connect.KindAnthropic, APIKey: "sk-ant-api03-not-admin"})
	err := b.svc.Test(context.Background(), c)
	if err == nil || err.Error() != "401 from Anthropic: the key was refused: it is not an admin key, or it was revoked (invalid x-api-key)" {
		t.Fatalf("test: %v", err)
	}
}
