package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/burnrate/burnrate/budget"
	"github.com/burnrate/burnrate/digest"
	"github.com/burnrate/burnrate/freshness"
	"github.com/burnrate/burnrate/schedule"
	"github.com/burnrate/burnrate/spend"
	"github.com/burnrate/burnrate/store"
)

// queryTimer is a tracer that sums each query's time, per phase, to tell
// which query of a slow computation is slow.
type queryTimer struct {
	mu    sync.Mutex
	phase string
	by    map[string]*queryTime // phase + "\x00" + sql
}

type queryTime struct {
	phase, sql string
	args       []any
	n          int
	total, max time.Duration
}

type startKey struct{}

type started struct {
	at   time.Time
	sql  string
	args []any
}

func (t *queryTimer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, startKey{}, started{time.Now(), d.SQL, d.Args})
}

func (t *queryTimer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	s, ok := ctx.Value(startKey{}).(started)
	if !ok {
		return
	}
	t.add(s.sql, s.args, time.Since(s.at))
}

type batchKey struct{}

// TraceBatchStart and TraceBatchQuery time the statements of a batch (the
// store sends some queries with settings around them as one): each from
// the batch's start or the previous statement's result to its own.
func (t *queryTimer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	last := time.Now()
	return context.WithValue(ctx, batchKey{}, &last)
}

func (t *queryTimer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	last, ok := ctx.Value(batchKey{}).(*time.Time)
	if !ok {
		return
	}
	now := time.Now()
	t.add(d.SQL, d.Args, now.Sub(*last))
	*last = now
}

func (t *queryTimer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// add counts one run of sql, with args, that took d, in the current phase.
func (t *queryTimer) add(sql string, args []any, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.phase == "" {
		return
	}
	k := t.phase + "\x00" + sql
	q := t.by[k]
	if q == nil {
		q = &queryTime{phase: t.phase, sql: sql}
		t.by[k] = q
	}
	q.args = args
	q.n++
	q.total += d
	q.max = max(q.max, d)
}

func (t *queryTimer) setPhase(p string) {
	t.mu.Lock()
	t.phase = p
	t.mu.Unlock()
}

// queries returns the queries recorded in phase p, the slowest (in total) first.
func (t *queryTimer) queries(p string) []*queryTime {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*queryTime
	for _, q := range t.by {
		if q.phase == p {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b *queryTime) int { return int(b.total - a.total) })
	return out
}

// errRollback ends a transaction that must leave nothing behind.
var errRollback = errors.New("rolled back")

// numbers times, on a bench database's big org, what the issue asks to
// stay under 10 ms each, calling the functions the app calls:
//
//   - the dashboard's headline and budget cards (spend.BuildHeadline), on a
//     connection fenced to the org as a request is;
//   - the daily digest's numbers (digest.Build for yesterday), as the
//     digest job builds them, unfenced;
//   - the budget alert evaluation (schedule.BudgetAlerts) as the alert job runs
//     it, in a transaction: "first" rolls every evaluation back, so each
//     one claims the crossings and reads the drivers as the first
//     evaluation after an import does; "repeat" claims once and then
//     times evaluations that find every crossing claimed (the usual case).
//     Both roll back: the database is left as it was found.
//
// It reads DATABASE_URL and writes nothing that stays.
func numbers(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("numbers", flag.ExitOnError)
	slug := fs.String("org", "bench", "the org")
	n := fs.Int("n", 50, "timed runs of each")
	dayFlag := fs.String("day", "", "today, YYYY-MM-DD in the org's time zone (default: the real today)")
	explainMs := fs.Float64("explain", 2, "EXPLAIN ANALYZE the SELECTs whose mean is over this many ms (0: none)")
	_ = fs.Parse(args)
	qt := &queryTimer{by: map[string]*queryTime{}}
	pool, err := openPool(ctx, qt)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	org, err := st.OrgBySlug(ctx, *slug)
	if err != nil {
		return fmt.Errorf("org %s: %w", *slug, err)
	}
	now := time.Now()
	if *dayFlag != "" {
		d, err := time.ParseInLocation(time.DateOnly, *dayFlag, org.Location())
		if err != nil {
			return fmt.Errorf("-day: %w", err)
		}
		// Noon of that day: the evaluation's "now".
		now = d.Add(12 * time.Hour)
	}
	today := budget.Day(now, org.Location())
	yesterday := digest.Yesterday(now, org.Location())
	budgets, err := st.Budgets(ctx, org.ID)
	if err != nil {
		return err
	}
	var charges int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM charges WHERE org_id = $1`, org.ID).Scan(&charges); err != nil {
		return err
	}
	fmt.Printf("org %s: %d charges, %d budgets; today %s, digest day %s; %d runs each (after one warm-up)\n",
		org.Slug, charges, len(budgets), today.Format(time.DateOnly), yesterday.Format(time.DateOnly), *n)
	for _, b := range budgets {
		fmt.Printf("  budget %q: %s %s %s, scope %+v\n", b.Name, b.Period, b.Amount, b.Currency, b.Scope)
	}

	type measure struct {
		name   string
		fenced bool // on a connection fenced to the org, as a request runs
		// claims: each run in a transaction rolled back; with again, the
		// runs follow one evaluation in the same transaction.
		claims, again bool
		run           func(st *store.Store) (int, error) // one run; the alerts it made
	}
	evaluate := func(st *store.Store) (int, error) {
		as, err := schedule.BudgetAlerts(ctx, st, org, now)
		return len(as), err
	}
	measures := []measure{
		{name: "budget cards (spend.BuildHeadline)", fenced: true, run: func(st *store.Store) (int, error) {
			// As a request reads them: how fresh the sources are, then the
			// headline resting on it.
			rep, err := freshness.Load(ctx, st, org, now)
			if err != nil {
				return 0, err
			}
			_, err = spend.BuildHeadline(ctx, st, org, rep)
			return 0, err
		}},
		{name: "digest numbers (digest.Build)", run: func(st *store.Store) (int, error) {
			_, err := digest.Build(ctx, st, org, yesterday, now)
			return 0, err
		}},
		{name: "alerts, first (schedule.BudgetAlerts)", claims: true, run: evaluate},
		{name: "alerts, repeat (schedule.BudgetAlerts)", claims: true, again: true, run: evaluate},
	}
	for _, m := range measures {
		var ds []time.Duration
		alerts := 0
		// Run 0 warms up and is not timed.
		once := func(st *store.Store, i int) error {
			if i == 1 {
				qt.setPhase(m.name)
			}
			t := time.Now()
			a, err := m.run(st)
			if i > 0 {
				ds = append(ds, time.Since(t))
			}
			alerts = max(alerts, a)
			return err
		}
		rolledBack := func(st *store.Store, fn func(tx *store.Store) error) error {
			err := st.InTx(ctx, func(tx *store.Store) error {
				if err := fn(tx); err != nil {
					return err
				}
				return errRollback
			})
			if errors.Is(err, errRollback) {
				return nil
			}
			return err
		}
		body := func(st *store.Store) error {
			switch {
			case m.claims && m.again:
				return rolledBack(st, func(tx *store.Store) error {
					for i := 0; i <= *n; i++ {
						if err := once(tx, i); err != nil {
							return err
						}
					}
					return nil
				})
			case m.claims:
				for i := 0; i <= *n; i++ {
					if err := rolledBack(st, func(tx *store.Store) error { return once(tx, i) }); err != nil {
						return err
					}
				}
				return nil
			}
			for i := 0; i <= *n; i++ {
				if err := once(st, i); err != nil {
					return err
				}
			}
			return nil
		}
		var err error
		if m.fenced {
			err = st.Fenced(ctx, org.ID, 0, body)
		} else {
			err = body(st)
		}
		qt.setPhase("")
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		note := ""
		if m.claims {
			note = fmt.Sprintf("  (alerts the first evaluation made: %d)", alerts)
		}
		fmt.Printf("\n%-36s p50 %6.1f ms  p95 %6.1f ms  max %6.1f ms  mean %6.1f ms%s\n", m.name,
			ms(percentile(ds, .5)), ms(percentile(ds, .95)), ms(percentile(ds, 1)), ms(sum/time.Duration(len(ds))), note)
		for _, q := range qt.queries(m.name) {
			fmt.Printf("    %5.1fx mean %6.2f ms  max %6.2f ms  %s\n", float64(q.n)/float64(len(ds)),
				ms(q.total/time.Duration(q.n)), ms(q.max), oneLine(q.sql, 110))
		}
	}

	if *explainMs <= 0 {
		return nil
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	for _, m := range measures {
		for _, q := range qt.queries(m.name) {
			s := strings.TrimSpace(q.sql)
			if ms(q.total/time.Duration(q.n)) < *explainMs || (!strings.HasPrefix(s, "SELECT") && !strings.HasPrefix(s, "WITH")) {
				continue
			}
			fmt.Printf("\n-- %s: %s\n", m.name, oneLine(s, 200))
			if err := explainQuery(ctx, conn.Conn(), org.ID, m.fenced, s, q.args); err != nil {
				return err
			}
		}
	}
	return nil
}

// explainQuery prints EXPLAIN (ANALYZE, BUFFERS) of sql, in a transaction
// rolled back, fenced to orgID by row-level security when fenced.
func explainQuery(ctx context.Context, conn *pgx.Conn, orgID int64, fenced bool, sql string, args []any) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if fenced {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL ROLE burnrate_app; SELECT set_config('burnrate.org_id', '%d', true)", orgID)); err != nil {
			return err
		}
	}
	rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+sql, args...)
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
	return rows.Err()
}

// token mints an API token for an org of a kept bench database (whose
// tokens are stored hashed and cannot be read back) and prints it.
func token(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("token", flag.ExitOnError)
	slug := fs.String("org", "bench", "the org")
	email := fs.String("email", "bench@example.com", "the token's creator, a member of the org")
	name := fs.String("name", "benchdash", "the token's name")
	_ = fs.Parse(args)
	pool, err := openPool(ctx, nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool)
	org, err := st.OrgBySlug(ctx, *slug)
	if err != nil {
		return fmt.Errorf("org %s: %w", *slug, err)
	}
	user, err := st.UserByEmail(ctx, *email)
	if err != nil {
		return fmt.Errorf("user %s: %w", *email, err)
	}
	_, secret, err := st.CreateAPIToken(ctx, org.ID, *name, user.ID)
	if err != nil {
		return err
	}
	fmt.Println(secret)
	return nil
}
