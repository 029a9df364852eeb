// Command benchdash benchmarks the dashboard on a large org (see
// scripts/bench-dashboard):
//
//	benchdash load    -rows N [-others K -other-rows M]   fill orgs with generated charges, roll up
//	benchdash hit     -base URL -email E -password P -token T -n N -c C
//	                                                    time the dashboard (cold: a view not cached
//	                                                    yet; warm: repeated) and /api/v1/spend
//	benchdash explain -email E -password P              EXPLAIN ANALYZE every query of one dashboard view
//	benchdash logstats -path P < server.log             server-side durations from a JSON log
//	benchdash numbers -org O -n N [-day D]              time the budget cards, the digest's numbers and
//	                                                    the alert evaluation (see numbers)
//	benchdash token   -org O -email E                   mint an API token (for a kept database)
//	benchdash views   -email E -password P -n N          split cold dashboard views' time into their
//	                                                    queries and the rest (Go), in process
//
// load, explain, numbers, token and views read DATABASE_URL. Charges are written with INSERT …
// SELECT generate_series straight into charges (the importer's COPY path
// is benchmarked by scripts/bench-import), then rolled up with the store's
// own RebuildDailySpend (which fills daily_spend_by and the month-to-date rollups too).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/cmd/internal/weblogin"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/web"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchdash load|hit|explain|logstats|numbers|token [flags]")
		os.Exit(2)
	}
	ctx := context.Background()
	var err error
	switch os.Args[1] {
	case "load":
		err = load(ctx, os.Args[2:])
	case "hit":
		err = hit(os.Args[2:])
	case "explain":
		err = explain(ctx, os.Args[2:])
	case "logstats":
		err = logstats(os.Args[2:])
	case "numbers":
		err = numbers(ctx, os.Args[2:])
	case "views":
		err = viewTimes(ctx, os.Args[2:])
	case "token":
		err = token(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchdash:", err)
		os.Exit(1)
	}
}

// openPool connects to DATABASE_URL with decimals registered and, when
// tracer is set, every query traced.
func openPool(ctx context.Context, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		return nil, err
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		store.RegisterTypes(c.TypeMap())
		return nil
	}
	cfg.ConnConfig.Tracer = tracer
	return pgxpool.NewWithConfig(ctx, cfg)
}

// chargesSQL generates rows charges for org $1, import $2, spread hourly
// over the days days before $4, over 1000 dimension combinations (about
// 1000 daily_spend rows a day: 6 providers, 48 services, 10 accounts, 8
// teams, 10 models, 5 GPU types, 2 currencies, 3 charge categories).
const chargesSQL = `
WITH combos AS (
	SELECT k,
		(ARRAY['aws-cur','gcp-billing','azure-cost','openai-usage','anthropic-usage','litellm-spend'])[k % 6 + 1] AS source,
		(ARRAY['AWS','Google Cloud','Microsoft','OpenAI','Anthropic','LiteLLM'])[k % 6 + 1] AS provider,
		(ARRAY['AWS','Google Cloud','Microsoft','OpenAI','Anthropic','LiteLLM'])[k % 6 + 1] || ' service ' || (k / 6) % 8 AS service,
		'acct-' || (k / 48) % 10 AS account,
		(ARRAY['ml-research','platform','inference','data','search','ads','support-bot',''])[(k / 7) % 8 + 1] AS team,
		CASE WHEN k % 6 >= 3 THEN (ARRAY['gpt-4o','gpt-4o-mini','gpt-4.1','gpt-4.1-mini','o3','claude-sonnet-4-5','claude-haiku-4-5','claude-opus-4','llama-3.1-70b','mistral-large'])[(k / 11) % 10 + 1] ELSE '' END AS model,
		CASE WHEN k % 6 < 3 AND k % 4 = 0 THEN (ARRAY['A100','H100','A10G','L4','T4'])[(k / 13) % 5 + 1] ELSE '' END AS gpu,
		CASE WHEN k % 50 = 0 THEN 'Tax' WHEN k % 97 = 0 THEN 'Credit' ELSE 'Usage' END AS category,
		CASE WHEN k % 20 = 0 THEN 'EUR' ELSE 'USD' END AS currency
	FROM generate_series(0, 999) k
)
INSERT INTO charges (org_id, import_id, line, source, provider_name, service_name, service_category, sku, resource_id,
	region_id, sub_account_id, charge_category, charge_period_start, charge_period_end, billed_cost, effective_cost,
	list_cost, billing_currency, consumed_quantity, consumed_unit, tags, team, x_instance_type, x_gpu_type, x_gpu_count,
	x_gpu_hours, x_model, x_input_tokens, x_output_tokens, x_cached_tokens, x_requests, x_priced_by_us,
	billing_account_id, billing_period_start, dedupe_key)
SELECT $1, $2, g, c.source, c.provider, c.service, 'Compute', 'sku-' || c.k, 'res-' || (g % 5000), 'us-east-1', c.account,
	c.category, ts, ts + interval '1 hour', cost, cost * 0.8, cost, c.currency, 1, 'Hours',
	jsonb_build_object('team', c.team, 'env', CASE WHEN g % 3 = 0 THEN 'dev' ELSE 'prod' END), c.team, '', c.gpu,
	CASE WHEN c.gpu <> '' THEN 8 ELSE 0 END, CASE WHEN c.gpu <> '' THEN 8 ELSE 0 END, c.model,
	CASE WHEN c.model <> '' THEN 1000 + g % 5000 ELSE 0 END, CASE WHEN c.model <> '' THEN 200 + g % 700 ELSE 0 END, 0,
	CASE WHEN c.model <> '' THEN 1 ELSE 0 END, false, 'payer', date_trunc('month', ts)::date, ''
FROM generate_series($5::bigint, $6::bigint) g
JOIN combos c ON c.k = (g * 7919) % 1000,
LATERAL (SELECT $4::timestamptz - make_interval(hours => (g % ($3 * 24))::int + 1) AS ts,
	round(((g * 2654435761) % 100000) / 10000.0 + 0.01, 4) AS cost) x`

func load(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	slug := fs.String("org", "bench", "the big org's slug")
	rows := fs.Int64("rows", 10_000_000, "charges for the big org")
	others := fs.String("others", "", "slugs of other orgs, comma-separated")
	otherRows := fs.Int64("other-rows", 300_000, "charges for each other org")
	days := fs.Int("days", 180, "days of history, ending now")
	batch := fs.Int64("batch", 1_000_000, "rows per INSERT")
	_ = fs.Parse(args)
	pool, err := openPool(ctx, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	now := time.Now().UTC().Truncate(time.Hour)
	fill := func(slug string, n int64) error {
		org, err := st.OrgBySlug(ctx, slug)
		if err != nil {
			return fmt.Errorf("org %s: %w", slug, err)
		}
		imp, err := st.CreateImport(ctx, store.NewImport{OrgID: org.ID, FileName: "bench-generated", SHA256: []byte("bench-" + slug), Via: "cli"})
		if err != nil {
			return err
		}
		start := time.Now()
		for lo := int64(1); lo <= n; lo += *batch {
			hi := min(lo+*batch-1, n)
			if _, err := pool.Exec(ctx, chargesSQL, org.ID, imp.ID, *days, now, lo, hi); err != nil {
				return fmt.Errorf("insert charges: %w", err)
			}
			fmt.Printf("  %s: %d/%d charges (%.0f rows/s)\n", slug, hi, n, float64(hi)/time.Since(start).Seconds())
		}
		t := time.Now()
		if err := st.RebuildDailySpend(ctx, org.ID, org.Location()); err != nil {
			return err
		}
		var rollups int64
		_ = pool.QueryRow(ctx, `SELECT count(*) FROM daily_spend WHERE org_id = $1`, org.ID).Scan(&rollups)
		fmt.Printf("  %s: rolled up into %d daily_spend rows in %s\n", slug, rollups, time.Since(t).Round(time.Millisecond))
		_, err = pool.Exec(ctx, `UPDATE imports SET status = 'succeeded', rows = $3, finished_at = now() WHERE org_id = $1 AND id = $2`, org.ID, imp.ID, n)
		return err
	}
	for _, o := range strings.Split(*others, ",") {
		if o != "" {
			if err := fill(o, *otherRows); err != nil {
				return err
			}
		}
	}
	if err := fill(*slug, *rows); err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `VACUUM (ANALYZE) daily_spend, daily_spend_by, month_to_date_drivers, month_to_date_spend_by, gpu_resource_daily`)
	if err == nil {
		_, err = pool.Exec(ctx, `ANALYZE charges`)
	}
	return err
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func stats(name string, ds []time.Duration, wall time.Duration) {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	fmt.Printf("%-34s n=%d  p50 %6.1f ms  p95 %6.1f ms  p99 %6.1f ms  max %6.1f ms  mean %6.1f ms  %.1f req/s\n", name, len(ds),
		ms(percentile(ds, .5)), ms(percentile(ds, .95)), ms(percentile(ds, .99)), ms(percentile(ds, 1)),
		ms(sum/time.Duration(len(ds))), float64(len(ds))/wall.Seconds())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// run sends n GETs of path with c workers and returns each one's latency.
func run(client *http.Client, req func() *http.Request, n, c int) ([]time.Duration, time.Duration, error) {
	var (
		mu   sync.Mutex
		out  []time.Duration
		werr error
		wg   sync.WaitGroup
	)
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				t := time.Now()
				res, err := client.Do(req())
				if err == nil {
					_, err = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if err == nil && res.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", res.StatusCode)
					}
				}
				d := time.Since(t)
				mu.Lock()
				out = append(out, d)
				if err != nil && werr == nil {
					werr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, time.Since(start), werr
}

func hit(args []string) (err error) {
	fs := flag.NewFlagSet("hit", flag.ExitOnError)
	base := fs.String("base", "http://127.0.0.1:8080", "the server")
	email := fs.String("email", "bench@example.com", "log in as")
	password := fs.String("password", "", "password")
	token := fs.String("token", "", "API token")
	n := fs.Int("n", 200, "requests per measurement")
	conc := fs.String("c", "1,2,4", "concurrency levels, comma-separated")
	days := fs.Int("days", 90, "the view's days, ending today (UTC)")
	importsOnly := fs.Bool("imports-only", false, "time only the first views after imports")
	settle := fs.Duration("settle", 0, "wait this long after each import before its view")
	_ = fs.Parse(args)
	client, err := weblogin.Client(*base, *email, *password)
	if err != nil {
		return err
	}
	if *importsOnly {
		return viewsAfterImports(client, *base, *token, *n, *settle)
	}
	to := time.Now().UTC()
	from := to.AddDate(0, 0, 1-*days)
	q := "from=" + from.Format(time.DateOnly) + "&to=" + to.Format(time.DateOnly)
	// Cold views: every request a view not asked before, so the dashboard
	// cache never answers: the 90-day range (and the 30- and 365-day
	// ones) shifted back 0–59 days times the six group-bys, 360 views of
	// each length.
	var cold atomic.Int64
	groups := []string{"provider", "service", "account", "team", "model", "source"}
	type target struct {
		name string
		req  func() *http.Request
	}
	coldView := func(days int) target {
		return target{fmt.Sprintf("GET /dashboard %dd, cold (new view)", days), func() *http.Request {
			k := int(cold.Add(1))
			t := to.AddDate(0, 0, -(k % 60))
			f := t.AddDate(0, 0, 1-days)
			r, _ := http.NewRequest(http.MethodGet, *base+"/dashboard?range=custom&from="+f.Format(time.DateOnly)+
				"&to="+t.Format(time.DateOnly)+"&group="+groups[(k/60)%len(groups)], nil)
			return r
		}}
	}
	targets := []target{
		coldView(*days), coldView(30), coldView(365),
		{"GET /dashboard?range=90d (page)", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, *base+"/dashboard?range=90d", nil)
			return r
		}},
		{"GET /dashboard (htmx, group=model)", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, *base+"/dashboard?range=90d&group=model", nil)
			r.Header.Set("HX-Request", "true")
			return r
		}},
		{"GET /api/v1/spend 90d group_by=provider", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, *base+"/api/v1/spend?"+q+"&group_by=provider", nil)
			r.Header.Set("Authorization", "Bearer "+*token)
			return r
		}},
	}
	defer func() {
		if err == nil {
			err = viewsAfterImports(client, *base, *token, *n, *settle)
		}
	}()
	for _, t := range targets {
		if _, _, err := run(client, t.req, 10, 1); err != nil { // warm up
			return fmt.Errorf("%s: %w", t.name, err)
		}
		for _, c := range strings.Split(*conc, ",") {
			var cn int
			fmt.Sscan(c, &cn)
			ds, wall, err := run(client, t.req, *n, cn)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			stats(fmt.Sprintf("%s c=%d", t.name, cn), ds, wall)
		}
	}
	return nil
}

// viewsAfterImports times the first 90-day view after each of n imports:
// before each view, untimed, a LiteLLM spend log of three new requests
// dated now goes through POST /api/v1/imports, which changes the org's
// spend version (so the dashboard's cache misses) and rewrites today's
// rollups to the month's end.
func viewsAfterImports(client *http.Client, base, token string, n int, settle time.Duration) error {
	view := func() *http.Request {
		r, _ := http.NewRequest(http.MethodGet, base+"/dashboard?range=90d", nil)
		return r
	}
	var ds []time.Duration
	start := time.Now()
	for i := range n {
		var body strings.Builder
		body.WriteString("request_id,startTime,spend,model,custom_llm_provider,team_id,prompt_tokens,completion_tokens\n")
		for k := range 3 {
			fmt.Fprintf(&body, "bench-%d-%d-%d,%s,0.%03d,gpt-4o,openai,bench,%d,%d\n", start.UnixNano(), i, k,
				time.Now().UTC().Format(time.RFC3339), 100+i+k, 1000+k, 200+k)
		}
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/imports", strings.NewReader(body.String()))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "text/csv")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		msg, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("import %d: status %d: %s", i, res.StatusCode, msg)
		}
		time.Sleep(settle)
		d, _, err := run(client, view, 1, 1)
		if err != nil {
			return fmt.Errorf("view after import %d: %w", i, err)
		}
		ds = append(ds, d...)
	}
	stats("GET /dashboard 90d, first view after an import c=1", ds, time.Since(start))
	return nil
}

// tracer records every query the dashboard runs.
type tracer struct {
	mu      sync.Mutex
	queries []traced
}

type traced struct {
	sql  string
	args []any
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	t.queries = append(t.queries, traced{d.SQL, d.Args})
	t.mu.Unlock()
	return ctx
}

func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The statements of a batch, too (the store sends some queries with
// settings around them as one).
func (t *tracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (t *tracer) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	t.mu.Lock()
	t.queries = append(t.queries, traced{d.SQL, d.Args})
	t.mu.Unlock()
}

func (t *tracer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// inProcess is the app served in this process on a traced pool, and a
// client logged in to it.
type inProcess struct {
	pool   *pgxpool.Pool
	st     *store.Store
	ts     *httptest.Server
	client *http.Client
}

func serveInProcess(ctx context.Context, tr pgx.QueryTracer, email, password string) (*inProcess, error) {
	pool, err := openPool(ctx, tr)
	if err != nil {
		return nil, err
	}
	st := store.New(pool)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.New(st, app.Config{BaseURL: "http://localhost:8080"}, log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	p := &inProcess{pool: pool, st: st, ts: httptest.NewServer(web.NewServer(log, a, web.Config{}))}
	if p.client, err = weblogin.Client(p.ts.URL, email, password); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (a *inProcess) close() {
	a.ts.Close()
	a.pool.Close()
}

func explain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("explain", flag.ExitOnError)
	email := fs.String("email", "bench@example.com", "log in as")
	password := fs.String("password", "", "password")
	path := fs.String("path", "/dashboard?range=90d", "the view to explain")
	_ = fs.Parse(args)
	tr := &tracer{}
	app, err := serveInProcess(ctx, tr, *email, *password)
	if err != nil {
		return err
	}
	defer app.close()
	pool, st, ts, client := app.pool, app.st, app.ts, app.client
	tr.mu.Lock()
	tr.queries = nil
	tr.mu.Unlock()
	res, err := client.Get(ts.URL + *path)
	if err != nil {
		return err
	}
	res.Body.Close()
	org, err := st.OrgBySlug(ctx, "bench")
	if err != nil {
		return err
	}
	tr.mu.Lock()
	qs := slices.Clone(tr.queries)
	tr.mu.Unlock()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	// Explain as the request ran: fenced to the org by row-level security.
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET ROLE burnrate_app; SELECT set_config('burnrate.org_id', '%d', false)", org.ID)); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), "RESET ROLE; RESET burnrate.org_id")
	reset := false
	for i, q := range qs {
		s := strings.TrimSpace(q.sql)
		if local, ok := strings.CutPrefix(s, "SET LOCAL "); ok {
			// A setting the next query ran under, in its transaction.
			if _, err := conn.Exec(ctx, "SET "+local); err != nil {
				return err
			}
			fmt.Printf("\n-- (SET LOCAL %s for the next query)", local)
			reset = true
			continue
		}
		if !strings.HasPrefix(s, "SELECT") && !strings.HasPrefix(s, "WITH") {
			continue
		}
		if !strings.Contains(s, "daily_spend") && !strings.Contains(s, "month_to_date") && !strings.Contains(s, "budget") {
			continue // sessions, users, memberships: the same on every page
		}
		fmt.Printf("\n-- query %d: %s\n", i, oneLine(s, 160))
		rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+s, q.args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			fmt.Println(line)
		}
		if rows.Err() != nil {
			return rows.Err()
		}
		if reset {
			if _, err := conn.Exec(ctx, "RESET work_mem"); err != nil {
				return err
			}
			reset = false
		}
	}
	return nil
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// logstats reads a JSON server log on stdin and prints the server-side
// duration percentiles of the requests whose path starts with -path.
func logstats(args []string) error {
	fs := flag.NewFlagSet("logstats", flag.ExitOnError)
	path := fs.String("path", "/dashboard", "path prefix")
	_ = fs.Parse(args)
	var ds []time.Duration
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Msg      string          `json:"msg"`
			Path     string          `json:"path"`
			Duration decimal.Decimal `json:"duration"`
			Status   int             `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != "request" || !strings.HasPrefix(l.Path, *path) || l.Status != 200 {
			continue
		}
		ds = append(ds, time.Duration(l.Duration.IntPart()))
	}
	if len(ds) == 0 {
		return fmt.Errorf("no requests to %s in the log", *path)
	}
	fmt.Printf("server-side %-22s n=%d  p50 %6.1f ms  p95 %6.1f ms  p99 %6.1f ms\n", *path, len(ds),
		ms(percentile(ds, .5)), ms(percentile(ds, .95)), ms(percentile(ds, .99)))
	return nil
}
