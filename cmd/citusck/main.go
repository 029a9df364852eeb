// Command citusck checks Burnrate on a Citus cluster from outside, through
// the burnrate binary, its HTTP API and SQL on the coordinator (see
// scripts/citus-check, which builds Citus and starts the cluster):
//
//	citusck -bin BURNRATE -url DATABASE_URL [-rows N] [-data DIR]
//
// It loads N generated CUR rows into a migrated database, converts it with
// 'burnrate citus distribute' (interrupted once, then run to the end, then
// run again to do nothing), and checks: every tenant table co-located and
// each org's shards on one node; two orgs' imports (through the fenced API
// and the CLI) exact in charges and every rollup; a restated re-import, an
// import deletion and an org deletion leaving every rollup exact; the
// fenced API's totals those of the org's charges, and one org's token
// seeing nothing of the other's; the dashboard answering; an interrupted
// import swept at start and by the sweep job; no error or warning in the
// log of serve or of any command. It prints one line per check and exits
// non-zero at the first that fails.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/cmd/internal/weblogin"
	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/ingest/curgen"
	"github.com/burnrate/burnrate/quantity"
	"github.com/burnrate/burnrate/store"
)

func main() {
	bin := flag.String("bin", "", "the burnrate binary (required)")
	url := flag.String("url", "", "DATABASE_URL of the database on the coordinator, migrated or empty (required)")
	rows := flag.Int("rows", 100_000, "generated CUR rows imported before the conversion")
	data := flag.String("data", "ingest/testdata", "the folder of sample exports and usage logs")
	flag.Parse()
	if *bin == "" || *url == "" {
		flag.Usage()
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "citusck-")
	if err != nil {
		fmt.Printf("FAIL setup: %v\n", err)
		os.Exit(1)
	}
	c := &check{bin: *bin, url: *url, data: *data, work: work, ctx: context.Background(), start: time.Now()}
	err = c.run(*rows)
	_ = c.stopServe()
	os.RemoveAll(work)
	if err != nil {
		fmt.Printf("FAIL %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("citus-check: all %d checks passed in %s\n", c.passed, time.Since(c.start).Round(time.Second))
}

type check struct {
	bin, url, data, work string
	ctx                  context.Context
	start                time.Time
	st                   *store.Store
	passed               int
	serve                *exec.Cmd
	serveLog             *bytes.Buffer
	base                 string
}

// org is an org the check made, with its API token and owner.
type org struct {
	store.Org
	token, email, password string
}

// step runs fn and prints how it went, with how long it took.
func (c *check) step(what string, fn func() (string, error)) error {
	start := time.Now()
	detail, err := fn()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	c.passed++
	if detail != "" {
		detail = ": " + detail
	}
	fmt.Printf("ok   %s%s (%s)\n", what, detail, time.Since(start).Round(time.Millisecond))
	return nil
}

// burnrate runs the binary with args on the cluster and returns its
// standard output; a warning or an error in its log fails it.
func (c *check) burnrate(args ...string) (string, error) {
	cmd := exec.CommandContext(c.ctx, c.bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+c.url, "LOG_LEVEL=info")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err == nil {
		err = badLog(errOut.String())
	}
	if err != nil {
		return out.String(), fmt.Errorf("burnrate %s: %w\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

var badLogLine = regexp.MustCompile(`(?m)^.*level=(ERROR|WARN).*$`)

// badLog is the first error or warning in a text log, if any, but for the
// warnings expected (matched by expected).
func badLog(log string, expected ...*regexp.Regexp) error {
	for _, m := range badLogLine.FindAllString(log, -1) {
		if !slices.ContainsFunc(expected, func(e *regexp.Regexp) bool { return e.MatchString(m) }) {
			return fmt.Errorf("logged %q", m)
		}
	}
	return nil
}

// interruptedWarning is the sweep's warning about the import the check
// left processing: the one warning serve must log.
var interruptedWarning = regexp.MustCompile(`level=WARN msg="an import was interrupted \(its server stopped mid-file\); marked it failed".* file=interrupted\.csv`)

func (c *check) run(rows int) error {
	if _, err := c.burnrate("migrate", "up"); err != nil {
		return err
	}
	st, err := store.Open(c.ctx, c.url)
	if err != nil {
		return err
	}
	defer st.Close()
	c.st = st

	bulk, err := c.newOrg("Bulk")
	if err != nil {
		return err
	}
	cur := filepath.Join(c.work, "cur.csv")
	if err := c.step(fmt.Sprintf("import %d generated CUR rows before the conversion", rows), func() (string, error) {
		if err := writeCUR(cur, rows, 1); err != nil {
			return "", err
		}
		out, err := c.burnrate("import", "--org", bulk.Slug, cur)
		return strings.TrimSpace(out), err
	}); err != nil {
		return err
	}
	if err := c.distribute(rows); err != nil {
		return err
	}
	if err := c.step("every tenant table is co-located by org_id, orgs, users and memberships are reference tables", c.colocated); err != nil {
		return err
	}
	if err := c.step("the bulk org's rollups are exact after the conversion", func() (string, error) { return c.exact(bulk) }); err != nil {
		return err
	}
	if err := c.step("a tenant table a later migration adds, with an identity and foreign keys, is distributed by burnrate_distribute", c.laterTable); err != nil {
		return err
	}

	a, err := c.newOrg("Alpha")
	if err != nil {
		return err
	}
	b, err := c.newOrg("Beta")
	if err != nil {
		return err
	}
	dead, err := c.abandonedImport(a)
	if err != nil {
		return err
	}
	if err := c.step("serve starts, fails the interrupted import at start, and its sweep job runs", func() (string, error) {
		return c.startServe(a, dead)
	}); err != nil {
		return err
	}
	if err := c.step("each org's shards are on one node", func() (string, error) { return c.onOneNode(bulk, a, b) }); err != nil {
		return err
	}

	// Imports: Alpha's through the fenced API, Beta's through the CLI.
	var alphaImports []ingest.ImportResult
	if err := c.step("Alpha's imports through the API (fenced): FOCUS, LiteLLM, OpenAI, Anthropic, OpenRouter, a CUR", func() (string, error) {
		small := filepath.Join(c.work, "cur-small.csv")
		if err := writeCUR(small, 2000, 7); err != nil {
			return "", err
		}
		for _, f := range []string{"exports/focus/focus_sample_1.0.csv", "llm/LiteLLM_SpendLogs.csv", "llm/openai_costs_2025-10.csv",
			"llm/anthropic_usage_report.csv", "llm/openrouter_activity.csv.gz", small} {
			if !filepath.IsAbs(f) {
				f = filepath.Join(c.data, f)
			}
			res, err := c.apiImport(a, f)
			if err != nil {
				return "", err
			}
			alphaImports = append(alphaImports, res)
		}
		return fmt.Sprintf("%d imports", len(alphaImports)), nil
	}); err != nil {
		return err
	}
	if err := c.step("Beta's imports through the CLI: AWS CUR, GCP, Azure, OCI, LiteLLM, Anthropic", func() (string, error) {
		for _, f := range []string{"exports/aws/test_cur.csv", "exports/gcp/gcp_bq_flattened.csv", "exports/azure/azure_version_2.csv",
			"exports/oci/oci_cost_report.csv", "llm/LiteLLM_DailyTeamSpend.csv", "llm/anthropic_cost_report.csv"} {
			if _, err := c.burnrate("import", "--org", b.Slug, filepath.Join(c.data, f)); err != nil {
				return "", err
			}
		}
		return "", nil
	}); err != nil {
		return err
	}
	for _, o := range []org{a, b} {
		if err := c.step(o.Name+"'s charges and every rollup are exact", func() (string, error) { return c.exact(o) }); err != nil {
			return err
		}
		if err := c.step(o.Name+"'s token gets its totals from /api/v1/spend", func() (string, error) { return c.apiTotals(o) }); err != nil {
			return err
		}
	}
	if err := c.step("a connection fenced to Alpha sees Alpha's charges only, even asked for every org's (row-level security on the workers)", func() (string, error) {
		return c.fenced(a, b)
	}); err != nil {
		return err
	}
	if err := c.step("Alpha's token sees nothing of Beta's", func() (string, error) { return c.isolated(a, b) }); err != nil {
		return err
	}
	if err := c.step("Alpha's dashboard answers, fenced", func() (string, error) { return c.dashboard(a) }); err != nil {
		return err
	}

	if err := c.step("a restated CUR (the same account and month) replaces Alpha's earlier one, through the API", func() (string, error) {
		restated := filepath.Join(c.work, "cur-restated.csv")
		if err := writeCUR(restated, 2500, 8); err != nil {
			return "", err
		}
		res, err := c.apiImport(a, restated)
		if err != nil {
			return "", err
		}
		if res.ReplacedRows != 2000 {
			return "", fmt.Errorf("replaced %d rows, want the earlier export's 2000", res.ReplacedRows)
		}
		return fmt.Sprintf("%d rows in, %d replaced", res.Rows, res.ReplacedRows), nil
	}); err != nil {
		return err
	}
	if err := c.step("after the restatement Alpha's rollups are exact, and its API totals right", func() (string, error) { return c.exactAndTotals(a) }); err != nil {
		return err
	}
	if err := c.step("Alpha's token removes an import (DELETE /api/v1/imports/ID)", func() (string, error) {
		id := alphaImports[2].ID // the OpenAI costs
		code, _, err := c.api(a, http.MethodDelete, fmt.Sprintf("/api/v1/imports/%d", id), nil)
		if err == nil && code != http.StatusNoContent {
			err = fmt.Errorf("status %d, want 204", code)
		}
		return fmt.Sprintf("import %d", id), err
	}); err != nil {
		return err
	}
	if err := c.step("after the removal Alpha's rollups are exact, and its API totals right", func() (string, error) { return c.exactAndTotals(a) }); err != nil {
		return err
	}
	if err := c.step("a new time zone for Alpha rebuilds its rollups (RebuildDailySpend), exact, and its API totals right", func() (string, error) {
		loc, err := time.LoadLocation("Asia/Tokyo")
		if err != nil {
			return "", err
		}
		err = c.st.InTx(c.ctx, func(tx *store.Store) error {
			o, err := tx.UpdateOrg(c.ctx, a.ID, store.OrgUpdate{Name: a.Name, TimeZone: loc.String(), Currency: a.Currency, TeamTagKey: a.TeamTagKey})
			if err != nil {
				return err
			}
			a.Org = o
			return tx.RebuildDailySpend(c.ctx, a.ID, loc)
		})
		if err != nil {
			return "", err
		}
		return c.exactAndTotals(a)
	}); err != nil {
		return err
	}
	if err := c.step("burnrate org delete takes Beta and leaves nothing of it", func() (string, error) {
		if _, err := c.burnrate("org", "delete", "--org", b.Slug, "--yes"); err != nil {
			return "", err
		}
		return c.nothingLeft(b)
	}); err != nil {
		return err
	}
	if err := c.step("after Beta's deletion Alpha's rollups are exact, and its API totals right", func() (string, error) { return c.exactAndTotals(a) }); err != nil {
		return err
	}
	return c.step("serve stops cleanly, with no error or warning in its log", func() (string, error) {
		if err := c.stopServe(); err != nil {
			return "", err
		}
		return "", badLog(c.serveLog.String(), interruptedWarning)
	})
}

// newOrg makes an org through 'burnrate org create'.
func (c *check) newOrg(name string) (org, error) {
	email := strings.ToLower(name) + "@example.com"
	out, err := c.burnrate("org", "create", "--name", name, "--owner-email", email, "--password", "citus-check-"+name, "--json")
	if err != nil {
		return org{}, err
	}
	var made struct {
		Slug  string `json:"slug"`
		Token string `json:"api_token"`
	}
	if err := json.Unmarshal([]byte(out), &made); err != nil {
		return org{}, fmt.Errorf("org create printed %q: %w", out, err)
	}
	o, err := c.st.OrgBySlug(c.ctx, made.Slug)
	return org{Org: o, token: made.Token, email: email, password: "citus-check-" + name}, err
}

// writeCUR writes a generated legacy CUR of rows rows; every seed is the
// same payer account and month, so a later one restates an earlier one.
func writeCUR(path string, rows int, seed int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := curgen.Generate(f, rows, seed); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// distribute converts the database: a first run stopped once it has made
// the first distributed table, a second run to the end (timed, step by
// step), a third that finds nothing to do.
func (c *check) distribute(rows int) error {
	if err := c.step("burnrate citus distribute, stopped (kill -9) half-way", func() (string, error) {
		cmd := exec.CommandContext(c.ctx, c.bin, "citus", "distribute")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+c.url, "LOG_LEVEL=info")
		out, err := cmd.StdoutPipe()
		if err != nil {
			return "", err
		}
		if err := cmd.Start(); err != nil {
			return "", err
		}
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if strings.HasPrefix(lines.Text(), "distribute imports by org_id") {
				_ = cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
		_ = cmd.Wait()
		var imports bool
		err = c.st.Pool().QueryRow(c.ctx, `SELECT EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = 'imports'::regclass)`).Scan(&imports)
		if err == nil && !imports {
			err = errors.New("killed before it distributed imports")
		}
		return "killed after distributing imports", err
	}); err != nil {
		return err
	}
	if err := c.step("burnrate citus distribute again: carries on where it stopped", func() (string, error) {
		out, err := c.burnrate("citus", "distribute")
		if err != nil {
			return "", err
		}
		var charges string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "distribute charges by org_id") {
				charges = strings.TrimSpace(strings.TrimPrefix(line, "distribute charges by org_id"))
			}
		}
		fmt.Print(indent(out))
		return fmt.Sprintf("charges (%d rows) distributed in %s", rows, charges), nil
	}); err != nil {
		return err
	}
	return c.step("burnrate citus distribute a third time: nothing to do", func() (string, error) {
		out, err := c.burnrate("citus", "distribute")
		if err == nil && !strings.Contains(out, "nothing to do") {
			err = fmt.Errorf("it did something:\n%s", out)
		}
		return "", err
	})
}

func indent(s string) string {
	return "       " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n       ") + "\n"
}

// laterTable makes a tenant table as a migration must on a distributed
// database (docs/operations.md): created, distributed, then given its
// foreign keys; and drops it again.
func (c *check) laterTable() (string, error) {
	for _, sql := range []string{
		`CREATE TABLE citusck_later (org_id bigint NOT NULL, id bigint GENERATED ALWAYS AS IDENTITY, user_id bigint,
			PRIMARY KEY (org_id, id))`,
		`SELECT burnrate_distribute('citusck_later')`,
		`ALTER TABLE citusck_later ADD FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE`,
		`ALTER TABLE citusck_later ADD FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL`,
	} {
		if _, err := c.st.Pool().Exec(c.ctx, sql); err != nil {
			return "", err
		}
	}
	var method string
	var colocated bool
	err := c.st.Pool().QueryRow(c.ctx, `
		SELECT partmethod::text, colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'imports'::regclass)
		FROM pg_dist_partition WHERE logicalrelid = 'citusck_later'::regclass`).Scan(&method, &colocated)
	if err == nil && (method != "h" || !colocated) {
		err = fmt.Errorf("partition method %q, co-located with imports %v", method, colocated)
	}
	if _, derr := c.st.Pool().Exec(c.ctx, `DROP TABLE citusck_later`); err == nil {
		err = derr
	}
	return "", err
}

// colocated checks pg_dist_partition against store.Distribution.
func (c *check) colocated() (string, error) {
	rows, err := c.st.Pool().Query(c.ctx, `SELECT logicalrelid::regclass::text, partmethod::text, repmodel::text, colocationid FROM pg_dist_partition`)
	if err != nil {
		return "", err
	}
	type placed struct {
		method, repmodel string
		colocation       int64
	}
	got := map[string]placed{}
	var name string
	var p placed
	if _, err := pgx.ForEachRow(rows, []any{&name, &p.method, &p.repmodel, &p.colocation}, func() error {
		got[name] = p
		return nil
	}); err != nil {
		return "", err
	}
	group := got["imports"].colocation
	var distributed, reference, local int
	for table, d := range store.Distribution {
		g := got[table]
		switch d.Placement {
		case store.Distributed:
			if g.method != "h" || g.colocation != group {
				return "", fmt.Errorf("%s is not distributed co-located with imports: %+v", table, g)
			}
			distributed++
		case store.Reference:
			if g.method != "n" || g.repmodel != "t" {
				return "", fmt.Errorf("%s is not a reference table: %+v", table, g)
			}
			reference++
		default:
			if g.method == "h" || g.repmodel == "t" {
				return "", fmt.Errorf("%s should stay on the coordinator: %+v", table, g)
			}
			if g.method != "" {
				local++
			}
		}
	}
	return fmt.Sprintf("%d distributed, %d reference, %d Citus-local on the coordinator", distributed, reference, local), nil
}

// onOneNode checks that each org's rows of every distributed table live on
// one node.
func (c *check) onOneNode(orgs ...org) (string, error) {
	var nodes []string
	for _, o := range orgs {
		var n int
		var node string
		err := c.st.Pool().QueryRow(c.ctx, `
			SELECT count(DISTINCT s.nodename || ':' || s.nodeport), min(s.nodename || ':' || s.nodeport)
			FROM pg_dist_partition p
			JOIN citus_shards s ON s.table_name = p.logicalrelid
				AND s.shardid = get_shard_id_for_distribution_column(p.logicalrelid, $1::bigint)
			WHERE p.partmethod = 'h'`, o.ID).Scan(&n, &node)
		if err != nil {
			return "", err
		}
		if n != 1 {
			return "", fmt.Errorf("%s's shards are on %d nodes", o.Name, n)
		}
		nodes = append(nodes, o.Name+" on "+node)
	}
	return strings.Join(nodes, ", "), nil
}

// exact checks every rollup of o against its charges.
func (c *check) exact(o org) (string, error) {
	diffs, err := c.st.RollupsDiffer(c.ctx, o.ID, o.Location())
	if err != nil {
		return "", err
	}
	if len(diffs) > 0 {
		return "", errors.New(strings.Join(diffs, "; "))
	}
	totals, err := c.chargeTotals(o, time.Time{}, time.Time{})
	if err != nil {
		return "", err
	}
	var parts []string
	for cur, v := range totals {
		parts = append(parts, quantity.FormatExact(v)+" "+cur)
	}
	slices.Sort(parts)
	return "charges " + strings.Join(parts, ", "), nil
}

func (c *check) exactAndTotals(o org) (string, error) {
	if _, err := c.exact(o); err != nil {
		return "", err
	}
	return c.apiTotals(o)
}

// chargeTotals are o's billed totals per currency, summed from charges,
// of the days (in o's time zone) from from to to; all of them when from is
// zero.
func (c *check) chargeTotals(o org, from, to time.Time) (map[string]decimal.Decimal, error) {
	rows, err := c.st.Pool().Query(c.ctx, `
		SELECT billing_currency, sum(billed_cost) FROM charges
		WHERE org_id = $1 AND ($3::date IS NULL OR (charge_period_start AT TIME ZONE $2)::date BETWEEN $3 AND $4)
		GROUP BY 1`, o.ID, o.TimeZone, nullDate(from), nullDate(to))
	if err != nil {
		return nil, err
	}
	out := map[string]decimal.Decimal{}
	var cur string
	var v decimal.Decimal
	_, err = pgx.ForEachRow(rows, []any{&cur, &v}, func() error {
		out[cur] = v
		return nil
	})
	return out, err
}

func nullDate(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// apiTotals checks that /api/v1/spend, asked with o's token over all of
// o's days (a year at a time: the API takes at most two), gives the totals
// of o's charges in each.
func (c *check) apiTotals(o org) (string, error) {
	var first, last *time.Time
	if err := c.st.Pool().QueryRow(c.ctx, `SELECT min(day), max(day) FROM daily_spend WHERE org_id = $1`, o.ID).Scan(&first, &last); err != nil {
		return "", err
	}
	if first == nil {
		return "", errors.New("no spend")
	}
	windows := 0
	for from := *first; !from.After(*last); from = from.AddDate(1, 0, 0) {
		to := from.AddDate(1, 0, -1)
		if to.After(*last) {
			to = *last
		}
		want, err := c.chargeTotals(o, from, to)
		if err != nil {
			return "", err
		}
		code, body, err := c.api(o, http.MethodGet, fmt.Sprintf("/api/v1/spend?from=%s&to=%s&group_by=provider",
			from.Format(time.DateOnly), to.Format(time.DateOnly)), nil)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d: %s", code, body)
		}
		if err != nil {
			return "", err
		}
		var got struct {
			Totals map[string]string `json:"totals"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			return "", err
		}
		if len(got.Totals) != len(want) {
			return "", fmt.Errorf("%s to %s: totals %v, want %v", from.Format(time.DateOnly), to.Format(time.DateOnly), got.Totals, want)
		}
		for cur, v := range want {
			if got.Totals[cur] != quantity.FormatExact(v) {
				return "", fmt.Errorf("%s to %s: %s total %q, want %q (the sum of its charges)", from.Format(time.DateOnly),
					to.Format(time.DateOnly), cur, got.Totals[cur], quantity.FormatExact(v))
			}
		}
		windows++
	}
	all, err := c.chargeTotals(o, time.Time{}, time.Time{})
	if err != nil {
		return "", err
	}
	var parts []string
	for cur, v := range all {
		parts = append(parts, quantity.FormatExact(v)+" "+cur)
	}
	slices.Sort(parts)
	return fmt.Sprintf("%s over %d yearly ranges, as its charges", strings.Join(parts, ", "), windows), nil
}

// fenced asks, on a connection fenced to a (store.Fenced, as requests
// are), for every org's charges and rollup rows, without naming an org:
// the policies on the workers' shards must show a's only, in a transaction
// or not.
func (c *check) fenced(a, b org) (string, error) {
	var want, others int64
	if err := c.st.Pool().QueryRow(c.ctx, `SELECT count(*) FILTER (WHERE org_id = $1), count(*) FILTER (WHERE org_id = $2) FROM charges`,
		a.ID, b.ID).Scan(&want, &others); err != nil {
		return "", err
	}
	if want == 0 || others == 0 {
		return "", fmt.Errorf("%d of Alpha's charges, %d of Beta's: nothing to tell apart", want, others)
	}
	var spend int64
	if err := c.st.Pool().QueryRow(c.ctx, `SELECT count(*) FROM daily_spend WHERE org_id = $1`, a.ID).Scan(&spend); err != nil {
		return "", err
	}
	seen := func(st *store.Store, where string) error {
		n, err := st.SeenRows(c.ctx, "charges")
		if err != nil {
			return err
		}
		m, err := st.SeenRows(c.ctx, "daily_spend")
		if err == nil && (n != want || m != spend) {
			err = fmt.Errorf("%s: %d charges and %d daily_spend rows seen, want Alpha's %d and %d", where, n, m, want, spend)
		}
		return err
	}
	return fmt.Sprintf("%d of %d charges", want, want+others), c.st.Fenced(c.ctx, a.ID, 0, func(f *store.Store) error {
		if err := seen(f, "outside a transaction"); err != nil {
			return err
		}
		return f.InTx(c.ctx, func(tx *store.Store) error { return seen(tx, "in a transaction") })
	})
}

// isolated checks that a's token sees nothing of b's.
func (c *check) isolated(a, b org) (string, error) {
	var theirs []int64
	rows, err := c.st.Pool().Query(c.ctx, `SELECT id FROM imports WHERE org_id = $1`, b.ID)
	if err == nil {
		theirs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil || len(theirs) == 0 {
		return "", errors.Join(err, errors.New("the second org has no imports"))
	}
	var ours []int64
	rows, err = c.st.Pool().Query(c.ctx, `SELECT id FROM imports WHERE org_id = $1`, a.ID)
	if err == nil {
		ours, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		return "", err
	}
	for _, id := range theirs {
		if slices.Contains(ours, id) {
			continue // ids are per org: the same number may be Alpha's own
		}
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			code, body, err := c.api(a, method, fmt.Sprintf("/api/v1/imports/%d", id), nil)
			if err != nil {
				return "", err
			}
			if code != http.StatusNotFound {
				return "", fmt.Errorf("%s Beta's import %d with Alpha's token: %d %s", method, id, code, body)
			}
		}
	}
	code, body, err := c.api(a, http.MethodGet, "/api/v1/imports", nil)
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET /api/v1/imports: %d", code)
	}
	if err != nil {
		return "", err
	}
	var history struct {
		Imports []struct {
			ID       int64  `json:"id"`
			FileName string `json:"file_name"`
		} `json:"imports"`
	}
	if err := json.Unmarshal(body, &history); err != nil {
		return "", fmt.Errorf("GET /api/v1/imports: %w", err)
	}
	for _, h := range history.Imports {
		if !slices.Contains(ours, h.ID) {
			return "", fmt.Errorf("the history of %s lists import %d (%s), which is not its own", a.Name, h.ID, h.FileName)
		}
	}
	code, body, err = c.api(a, http.MethodGet, "/api/v1/org", nil)
	if err == nil && (code != http.StatusOK || !bytes.Contains(body, []byte(`"slug":"`+a.Slug+`"`))) {
		err = fmt.Errorf("GET /api/v1/org: %d %s", code, body)
	}
	return fmt.Sprintf("Beta's %d imports answer 404 to GET and DELETE; Alpha's history holds its %d", len(theirs), len(history.Imports)), err
}

// dashboard logs in as o's owner and asks the dashboard of all o's days,
// its page and its chart data.
func (c *check) dashboard(o org) (string, error) {
	client, err := weblogin.Client(c.base, o.email, o.password)
	if err != nil {
		return "", err
	}
	var first, last time.Time
	if err := c.st.Pool().QueryRow(c.ctx, `SELECT min(day), max(day) FROM daily_spend WHERE org_id = $1`, o.ID).Scan(&first, &last); err != nil {
		return "", err
	}
	view := fmt.Sprintf("/dashboard?range=custom&from=%s&to=%s", first.Format(time.DateOnly), last.Format(time.DateOnly))
	for _, u := range []string{view, view + "&group=model", view + "&format=json", view + "&provider=AWS&format=csv&table=drivers"} {
		res, err := client.Get(c.base + u)
		if err != nil {
			return "", err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || len(body) == 0 {
			return "", fmt.Errorf("%s: status %d", u, res.StatusCode)
		}
	}
	return "page, grouped page, chart JSON and a filtered CSV", nil
}

// api asks the server as o's token.
func (c *check) api(o org, method, path string, body io.Reader) (int, []byte, error) {
	req, err := http.NewRequestWithContext(c.ctx, method, c.base+path, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+o.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

// apiImport uploads path to POST /api/v1/imports as o.
func (c *check) apiImport(o org, path string) (ingest.ImportResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return ingest.ImportResult{}, err
	}
	defer f.Close()
	code, body, err := c.api(o, http.MethodPost, "/api/v1/imports?filename="+filepath.Base(path), f)
	if err == nil && code != http.StatusCreated {
		err = fmt.Errorf("status %d: %s", code, body)
	}
	var res ingest.ImportResult
	if err == nil {
		err = json.Unmarshal(body, &res)
	}
	if err != nil {
		return res, fmt.Errorf("POST /api/v1/imports %s: %w", filepath.Base(path), err)
	}
	return res, nil
}

// abandonedImport leaves an import of o processing, as a server that died
// mid-file does: its connection gone.
func (c *check) abandonedImport(o org) (int64, error) {
	var id int64
	return id, c.step("an import left processing by a connection that died", func() (string, error) {
		dying, err := store.Open(c.ctx, c.url)
		if err != nil {
			return "", err
		}
		err = dying.Conn(c.ctx, func(st *store.Store) error {
			imp, err := st.CreateImport(c.ctx, store.NewImport{OrgID: o.ID, FileName: "interrupted.csv", Via: "cli"})
			id = imp.ID
			return err
		})
		dying.Close()
		return fmt.Sprintf("import %d", id), err
	})
}

// startServe starts 'burnrate serve' on a free loopback port and waits
// until the interrupted import is failed and a sweep job has completed.
func (c *check) startServe(o org, interrupted int64) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	ln.Close()
	c.base = "http://" + addr
	c.serveLog = &bytes.Buffer{}
	c.serve = exec.Command(c.bin, "serve")
	c.serve.Env = append(os.Environ(), "DATABASE_URL="+c.url, "LOG_LEVEL=info", "ADDR="+addr)
	c.serve.Stdout, c.serve.Stderr = io.Discard, c.serveLog
	if err := c.serve.Start(); err != nil {
		return "", err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		imp, err := c.st.Import(c.ctx, o.ID, interrupted)
		if err != nil {
			return "", err
		}
		var swept bool
		if err := c.st.Pool().QueryRow(c.ctx, `SELECT EXISTS (SELECT FROM river_job WHERE kind = 'sweep_imports' AND state = 'completed')`).Scan(&swept); err != nil {
			return "", err
		}
		res, herr := http.Get(c.base + "/healthz")
		if herr == nil {
			res.Body.Close()
		}
		if imp.Status == store.ImportFailed && swept && herr == nil && res.StatusCode == http.StatusOK {
			if imp.Error != ingest.InterruptedMessage {
				return "", fmt.Errorf("the interrupted import failed with %q", imp.Error)
			}
			return fmt.Sprintf("import %d: %q", interrupted, imp.Error), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("after 2 minutes: import %s, sweep job completed %v, health %v\n%s", imp.Status, swept, herr, c.serveLog)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stopServe stops serve as an operator does (SIGTERM) and waits for it.
func (c *check) stopServe() error {
	if c.serve == nil || c.serve.Process == nil {
		return nil
	}
	_ = c.serve.Process.Signal(syscall.SIGTERM)
	err := c.serve.Wait()
	c.serve = nil
	return err
}

// nothingLeft checks that no table with an org_id holds a row of o.
func (c *check) nothingLeft(o org) (string, error) {
	rows, err := c.st.Pool().Query(c.ctx, `
		SELECT c.relname FROM pg_class c
		WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
			AND EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)`)
	if err != nil {
		return "", err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	for _, t := range tables {
		var n int
		if err := c.st.Pool().QueryRow(c.ctx, `SELECT count(*) FROM `+pgx.Identifier{t}.Sanitize()+` WHERE org_id = $1`, o.ID).Scan(&n); err != nil {
			return "", err
		}
		if n != 0 {
			return "", fmt.Errorf("%d rows of %s left in %s", n, o.Name, t)
		}
	}
	return fmt.Sprintf("no row in any of the %d tables with an org_id", len(tables)), nil
}
