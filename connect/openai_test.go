package connect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/connect"
)

// fakeOpenAI serves the organization Costs and Completions Usage APIs in
// their documented shapes: pages of daily buckets ({"object": "page",
// "data": [{"object": "bucket", "start_time", "end_time", "results"}],
// "has_more", "next_page"}), perPage buckets a page whatever the limit
// asked, so that a window spans pages. cost(day, project, lineItem) is what
// a bucket holds today: tests restate it by changing the function.
type fakeOpenAI struct {
	t       testing.TB
	key     string
	perPage int
	// projects and items are the groups each day holds; nil means
	// openAIProjects and openAILineItems.
	projects, items []string

	mu       sync.Mutex
	cost     func(day time.Time, project, item string) string
	fail     []int // statuses to answer before the next success
	requests []*http.Request
}

var (
	openAIProjects  = []string{"proj_research", "proj_prod"}
	openAILineItems = []string{"gpt-4o-2024-08-06, input", "gpt-4o-2024-08-06, output", "ft-gpt-4o-mini-2024-07-18, training"}
)

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	if got := r.Header.Get("Authorization"); got != "Bearer "+f.key {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
		return
	}
	if len(f.fail) > 0 {
		status := f.fail[0]
		f.fail = f.fail[1:]
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"error":{"message":"Rate limit reached for requests"}}`)
		return
	}
	q := r.URL.Query()
	start, err1 := strconv.ParseInt(q.Get("start_time"), 10, 64)
	end, err2 := strconv.ParseInt(q.Get("end_time"), 10, 64)
	if err1 != nil || err2 != nil || q.Get("bucket_width") != "1d" {
		f.t.Errorf("bad window %s", r.URL.RawQuery)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var days []time.Time
	for d := time.Unix(start, 0).UTC(); d.Unix() < end; d = d.AddDate(0, 0, 1) {
		days = append(days, d)
	}
	first := 0
	if p := q.Get("page"); p != "" {
		first, _ = strconv.Atoi(strings.TrimPrefix(p, "page_"))
	}
	last := min(first+f.perPage, len(days))
	type bucket struct {
		Object    string `json:"object"`
		StartTime int64  `json:"start_time"`
		EndTime   int64  `json:"end_time"`
		Results   []any  `json:"results"`
	}
	page := struct {
		Object   string   `json:"object"`
		Data     []bucket `json:"data"`
		HasMore  bool     `json:"has_more"`
		NextPage *string  `json:"next_page"`
	}{Object: "page", Data: []bucket{}}
	for _, d := range days[first:last] {
		b := bucket{Object: "bucket", StartTime: d.Unix(), EndTime: d.AddDate(0, 0, 1).Unix(), Results: []any{}}
		switch r.URL.Path {
		case "/v1/organization/costs":
			projects, items := openAIProjects, openAILineItems
			if f.projects != nil {
				projects, items = f.projects, f.items
			}
			for _, p := range projects {
				for _, li := range items {
					v := f.cost(d, p, li)
					if v == "" {
						continue
					}
					b.Results = append(b.Results, map[string]any{
						"object": "organization.costs.result", "amount": map[string]any{"value": json.Number(v), "currency": "usd"},
						"line_item": li, "project_id": p, "organization_id": "org-burnrate",
					})
				}
			}
		case "/v1/organization/usage/completions":
			for i, p := range openAIProjects {
				b.Results = append(b.Results, map[string]any{
					"object": "organization.usage.completions.result", "input_tokens": 1_000_000 * (i + 1), "output_tokens": 100_000,
					"input_cached_tokens": 200_000, "num_model_requests": 50, "input_audio_tokens": 0, "output_audio_tokens": 0,
					"project_id": p, "user_id": nil, "api_key_id": "key_abc", "model": "gpt-4o-2024-08-06", "batch": false, "service_tier": nil,
				})
			}
		default:
			w.WriteHeader(http.StatusNotFound)
			return
		}
		page.Data = append(page.Data, b)
	}
	if last < len(days) {
		next := fmt.Sprintf("page_%d", last)
		page.HasMore, page.NextPage = true, &next
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// sum is what the fixture holds over [from, to).
func (f *fakeOpenAI) sum(from, to time.Time) decimal.Decimal {
	total := decimal.Zero
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		for _, p := range openAIProjects {
			for _, li := range openAILineItems {
				if v := f.cost(d, p, li); v != "" {
					total = total.Add(decimal.RequireFromString(v))
				}
			}
		}
	}
	return total
}

func (f *fakeOpenAI) takeRequests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.requests
	f.requests = nil
	return r
}

// baseCost is a day's cost of a project and line item, in dollars: values
// with many decimals and one in scientific notation, as the API writes
// floats.
func baseCost(d time.Time, project, item string) string {
	n := d.Day()
	switch {
	case strings.HasSuffix(item, "input"):
		return fmt.Sprintf("%d.%06d", n, 123457*len(project)%1000000)
	case strings.HasSuffix(item, "output"):
		return fmt.Sprintf("0.%02d", n)
	case project == "proj_prod":
		return "" // no fine-tuning in prod
	}
	return "4.5e-05"
}

func newFakeOpenAI(t *testing.T, b *bundle) *fakeOpenAI {
	f := &fakeOpenAI{t: t, key: "sk-admin-test-0123456789abcdef", perPage: 7, cost: baseCost}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	b.svc.OpenAIURL = srv.URL
	return f
}

func syncNow(t *testing.T, b *bundle, id int64) connect.Result {
	t.Helper()
	res, err := b.svc.Sync(context.Background(), b.org.ID, id)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

// A first sync backfills from the start date through today, across pages,
// after a 429; the total is the fixture's to the cent; the next run a day
// later pulls the last few days again and a restated bucket replaces its
// earlier value; a pull that finds nothing new changes nothing.
func TestOpenAICostsBackfillAndRestate(t *testing.T) {
	b := newBundle(t)
	f := newFakeOpenAI(t, b)
	c := b.create(t, connect.Input{Name: "OpenAI prod", Kind: connect.KindOpenAI, APIKey: f.key, StartDate: "2026-10-01"})
	f.fail = []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}

	res := syncNow(t, b, c.ID)
	from, to := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	if got, want := b.billed(t), f.sum(from, to); !got.Equal(want) {
		t.Fatalf("billed %s after the backfill, want the fixture's %s", got, want)
	}
	if len(res.Imports) != 1 || res.Rows != 51*5 || res.Imports[0].Duplicate {
		t.Fatalf("result %+v: want one import of 255 rows", res)
	}
	reqs := f.takeRequests()
	// Two refusals, then 51 days at 7 a page: 8 pages.
	if len(reqs) != 10 {
		t.Fatalf("%d requests, want 2 refused and 8 pages", len(reqs))
	}
	for i, r := range reqs {
		q := r.URL.Query()
		if r.Method != http.MethodGet || r.URL.Path != "/v1/organization/costs" || q.Get("start_time") != strconv.FormatInt(from.Unix(), 10) ||
			q.Get("end_time") != strconv.FormatInt(to.Unix(), 10) || q.Get("limit") != "180" ||
			!slices.Equal(q["group_by"], []string{"project_id", "line_item"}) {
			t.Errorf("request %d: %s %s", i, r.Method, r.URL)
		}
		wantPage := ""
		if i > 2 {
			wantPage = fmt.Sprintf("page_%d", (i-2)*7)
		}
		if q.Get("page") != wantPage {
			t.Errorf("request %d asked page %q, want %q", i, q.Get("page"), wantPage)
		}
	}
	got := b.connection(t, c.ID)
	if got.LastStatus != "ok" || got.LastRows != 255 || got.LastError != "" || !got.NextRunAt.Equal(b.now.Add(connect.DefaultInterval)) {
		t.Fatalf("connection after the sync: %+v", got)
	}
	var state connect.State
	if err := json.Unmarshal(got.State, &state); err != nil || state.SyncedThrough != "2026-11-21" {
		t.Fatalf("state %s", got.State)
	}
	imps, err := b.st.Imports(context.Background(), b.org.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(imps) != 1 || imps[0].Via != "connection OpenAI prod" || imps[0].Source != "openai-costs" {
		t.Fatalf("import history %+v", imps)
	}

	// A day later: the last three days are pulled again, and yesterday's
	// bucket was restated.
	b.now = b.now.Add(24 * time.Hour)
	f.cost = func(d time.Time, p, li string) string {
		if d.Day() == 20 && d.Month() == 11 && strings.HasSuffix(li, "output") {
			return "7.77"
		}
		return baseCost(d, p, li)
	}
	res = syncNow(t, b, c.ID)
	to = to.AddDate(0, 0, 1)
	if got, want := b.billed(t), f.sum(from, to); !got.Equal(want) {
		t.Fatalf("billed %s after the restatement, want the fixture's %s", got, want)
	}
	reqs = f.takeRequests()
	if q := reqs[0].URL.Query(); q.Get("start_time") != strconv.FormatInt(time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC).Unix(), 10) {
		t.Fatalf("the second run started at %s, want three days before the last run's end", q.Get("start_time"))
	}
	if res.Imports[0].ReplacedRows != 3*5 || res.Rows != 4*5 {
		t.Fatalf("second run %+v: want 20 rows replacing 15", res.Imports[0])
	}

	// Nothing new: the same file, a no-op.
	before := b.billed(t)
	res = syncNow(t, b, c.ID)
	if !res.Imports[0].Duplicate || res.Rows != 0 || !b.billed(t).Equal(before) {
		t.Fatalf("third run %+v: want a duplicate, nothing changed", res)
	}
}

// Usage pulls tokens grouped by model, project and API key; the importer
// prices them with the org's prices.
func TestOpenAIUsage(t *testing.T) {
	b := newBundle(t)
	f := newFakeOpenAI(t, b)
	c := b.create(t, connect.Input{Name: "OpenAI tokens", Kind: connect.KindOpenAI, APIKey: f.key, StartDate: "2026-11-15", Data: connect.DataUsage})
	res := syncNow(t, b, c.ID)
	if res.Rows != 6*2 {
		t.Fatalf("rows %d, want 12", res.Rows)
	}
	r := f.takeRequests()[0]
	if q := r.URL.Query(); r.URL.Path != "/v1/organization/usage/completions" || q.Get("limit") != "31" ||
		!slices.Equal(q["group_by"], []string{"project_id", "user_id", "api_key_id", "model", "batch", "service_tier"}) {
		t.Fatalf("request %s", r.URL)
	}
	var in, out, cached int64
	err := b.st.Pool().QueryRow(context.Background(), `SELECT sum(x_input_tokens), sum(x_output_tokens), sum(x_cached_tokens) FROM charges WHERE org_id = $1`, b.org.ID).Scan(&in, &out, &cached)
	if err != nil {
		t.Fatal(err)
	}
	if in != 6*3_000_000 || out != 6*200_000 || cached != 6*400_000 {
		t.Fatalf("tokens in %d out %d cached %d", in, out, cached)
	}
	if !b.billed(t).IsPositive() {
		t.Fatal("usage was not priced")
	}
}

// A refused key is recorded in plain words and not retried; a provider
// that keeps failing is retried, recorded, and leaves the state as it was;
// another org's connection syncs meanwhile.
func TestOpenAIFailures(t *testing.T) {
	b := newBundle(t)
	f := newFakeOpenAI(t, b)
	bad := b.create(t, connect.Input{Name: "revoked", Kind: connect.KindOpenAI, APIKey: "sk-admin-revoked-key-000"})
	_, err := b.svc.Sync(context.Background(), b.org.ID, bad.ID)
	if err == nil || connect.Transient(err) {
		t.Fatalf("sync with a refused key: %v", err)
	}
	got := b.connection(t, bad.ID)
	if got.LastStatus != "failed" || got.LastError != "401 from OpenAI: the key was refused: it is not an admin key, or it was revoked (Incorrect API key provided)" {
		t.Fatalf("recorded %q %q", got.LastStatus, got.LastError)
	}
	if n := len(f.takeRequests()); n != 1 {
		t.Fatalf("a refused key was tried %d times", n)
	}

	good := b.create(t, connect.Input{Name: "good", Kind: connect.KindOpenAI, APIKey: f.key, StartDate: "2026-11-19"})
	f.fail = []int{500, 502, 503}
	_, err = b.svc.Sync(context.Background(), b.org.ID, good.ID)
	if !connect.Transient(err) {
		t.Fatalf("sync against a failing provider: %v, want a transient error", err)
	}
	got = b.connection(t, good.ID)
	if got.LastError != "503 from OpenAI: OpenAI is failing; will try again later (Rate limit reached for requests)" || string(got.State) != "{}" {
		t.Fatalf("recorded %q, state %s", got.LastError, got.State)
	}
	if len(f.takeRequests()) != 3 {
		t.Fatal("want three tries")
	}
	if syncNow(t, b, good.ID).Rows == 0 {
		t.Fatal("the retry imported nothing")
	}
}
