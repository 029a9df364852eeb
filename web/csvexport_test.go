package web_test

import (
	"encoding/csv"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store/storetest"
)

// formulaNames are names a spreadsheet would run as formulas.
var formulaNames = []string{`=HYPERLINK("http://x","y")`, "+1", "@SUM(A1)", "-2+3", "\t=1+1", "\r=2+2"}

// TestDashboardCSVNeutralisesFormulas imports bills (real LiteLLM and FOCUS
// files, through the import API) whose provider, service, account, team and
// model are formulas, some led by a tab or carriage return, and a credit of
// -12.50, then downloads every dashboard table under every group-by: no
// text cell starts a formula (each such name comes back behind a single
// quote), and every number stays a bare number, the credit included.
func TestDashboardCSVNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	b := setup(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Formulas"})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	litellm, focus := hostileBills(formulaNames)
	credit := testNow.UTC().AddDate(0, 0, -3).Truncate(24 * time.Hour)
	focus = append(focus, []string{"-12.50", "-12.50", "USD", credit.Format(time.DateTime), credit.AddDate(0, 0, 1).Format(time.DateTime),
		"Credit", "AWS", "Refund", "123", ""})
	postImport(t, b, token, "litellm-spend", "litellm.csv", litellm)
	postImport(t, b, token, "focus", "focus.csv", focus)
	c := b.client(t)
	c.login(owner.Email)

	numberCols := map[string]bool{"amount": true, "before": true, "after": true, "change": true, "change_percent": true,
		"gpu_hours": true, "per_gpu_hour": true, "input_tokens": true, "output_tokens": true, "cached_tokens": true,
		"requests": true, "per_million_tokens": true, "baseline_median": true}
	number := regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?%?$`)
	dangerous := func(s string) bool {
		if s == "" {
			return false
		}
		if s[0] == '\t' || s[0] == '\r' || s[0] == '\n' {
			return true
		}
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		return s != "" && strings.ContainsRune("=+-@＝＋－＠", []rune(s)[0])
	}
	seen := map[string]bool{} // every text cell of every table
	sawCredit := false
	for _, group := range []string{"provider", "service", "account", "team", "model", "source"} {
		for _, table := range []string{"daily", "drivers", "dod", "wow", "gpus", "models", "anomalies"} {
			path := "/dashboard?range=30d&group=" + group + "&format=csv&table=" + table
			rec := c.get(path)
			wantStatus(t, rec, http.StatusOK)
			r := csv.NewReader(rec.Body)
			r.FieldsPerRecord = -1
			rows, err := r.ReadAll()
			if err != nil || len(rows) == 0 {
				t.Fatalf("%s: %v", path, err)
			}
			header := rows[0]
			if table != "gpus" && len(rows) < 2 {
				t.Errorf("%s: no rows", path)
			}
			for _, row := range rows[1:] {
				for i, cell := range row {
					col := header[i]
					if numberCols[col] {
						if !number.MatchString(cell) && !(col == "change_percent" && cell == "new") {
							t.Errorf("%s: %s = %q, not a bare number", path, col, cell)
						}
						continue
					}
					if dangerous(cell) && !seen[cell] {
						t.Errorf("%s: %s = %q starts a formula", path, col, cell)
					}
					seen[cell] = true
				}
				if table == "daily" && group == "service" && row[2] == "Refund" {
					sawCredit = true
					if !decimal.RequireFromString(row[3]).Equal(decimal.RequireFromString("-12.50")) || row[3][0] != '-' {
						t.Errorf("%s: the credit is %q, want the number -12.50", path, row[3])
					}
				}
			}
		}
	}
	if !sawCredit {
		t.Error("the -12.50 credit is not in the daily table by service")
	}
	// Each name comes back, quoted; import trims the spaces round most
	// fields, but not those of tags and LiteLLM's team alias (team).
	for _, n := range formulaNames {
		if !seen["'"+n] && !seen["'"+strings.TrimSpace(n)] {
			t.Errorf("%q is not in any table as '%s", n, n)
		}
	}
	for _, n := range []string{"'\t=1+1", "'\r=2+2"} {
		if !seen[n] {
			t.Errorf("%q (a team led by a tab or CR) is not in any table", n)
		}
	}
}
