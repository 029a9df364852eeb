package web_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// xssNames are names that run script wherever a page turns them into HTML.
var xssNames = []string{
	`<img src=x onerror="window.__pwned=1">`,
	`<script>window.__pwned=1</script>`,
	`"><svg onload=window.__pwned=1>`,
}

// postImport uploads one CSV file through POST /api/v1/imports, the path
// scripts and the upload form share.
func postImport(t *testing.T, b *bundle, token, source, filename string, records [][]string) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(records); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/imports?source="+source+"&filename="+filename, &buf)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "text/csv")
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, req)
	wantStatus(t, rec, http.StatusCreated)
}

// hostileBills are a LiteLLM spend log and a FOCUS file, in their real
// formats, in which every free-text dimension (provider, service, account,
// team, model) takes each of names: a dollar a day each from 20 to 2 days
// ago, and a hundred 4 days ago, an unusual day whose drivers are names.
func hostileBills(names []string) (litellm, focus [][]string) {
	litellm = [][]string{{"request_id", "spend", "prompt_tokens", "completion_tokens", "startTime", "model",
		"custom_llm_provider", "metadata", "team_id"}}
	focus = [][]string{{"BilledCost", "EffectiveCost", "BillingCurrency", "ChargePeriodStart", "ChargePeriodEnd",
		"ChargeCategory", "ProviderName", "ServiceName", "SubAccountId", "Tags"}}
	today := testNow.UTC().Truncate(24 * time.Hour)
	for daysAgo := 20; daysAgo >= 2; daysAgo-- {
		day := today.AddDate(0, 0, -daysAgo)
		spend := "1.00"
		if daysAgo == 4 {
			spend = "100.00"
		}
		for i, n := range names {
			alias, _ := json.Marshal(map[string]string{"user_api_key_team_alias": n})
			tags, _ := json.Marshal(map[string]string{"team": n})
			litellm = append(litellm, []string{fmt.Sprintf("req-%d-%d", daysAgo, i), spend, "10", "5",
				day.Add(12 * time.Hour).Format(time.RFC3339), n, n, string(alias), n})
			focus = append(focus, []string{spend, spend, "USD", day.Format(time.DateTime), day.AddDate(0, 0, 1).Format(time.DateTime),
				"Usage", n, n, n, string(tags)})
		}
	}
	return litellm, focus
}

// tipReport is what showing every tooltip of a page's charts saw.
type tipReport struct {
	Charts, Shown int      // charts found, tooltips shown
	Texts         []string // each different tooltip's text
	Injected      []string // elements inside tooltips that no tooltip of ours makes
}

// TestBrowserChartsShowHostileNamesAsText imports bills whose provider,
// service, account, team and model are script-bearing names, and names
// budgets the same, then in a real browser shows every chart's tooltip at
// every point of every series, by ECharts' showTip and by moving the mouse,
// on the dashboard (every group-by, daily and cumulative), the advisor and
// the break-even page: no script runs, the CSP reports nothing, and the
// names show as literal text in the tooltips.
func TestBrowserChartsShowHostileNamesAsText(t *testing.T) {
	t.Parallel()
	b, base := liveServer(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Hostile names"})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	litellm, focus := hostileBills(xssNames)
	postImport(t, b, token, "litellm-spend", "litellm.csv", litellm)
	postImport(t, b, token, "focus", "focus.csv", focus)
	for _, n := range xssNames {
		body, _ := json.Marshal(map[string]string{"name": n, "amount": "50"})
		rec := httptest.NewRecorder()
		b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/budgets", token, string(body)))
		wantStatus(t, rec, http.StatusCreated)
	}
	// Admins name their own instances and models in price overrides; the
	// advisor and break-even charts show those names.
	cheap := decimal.RequireFromString("0.01")
	if _, err := b.st.UpsertGPUPriceOverrides(ctx(), org.ID, owner.ID, []store.GPUPriceOverrideInput{
		{Provider: xssNames[0], InstanceType: xssNames[1], GPU: "H100", GPUCount: decimal.NewFromInt(8), OnDemand: &cheap},
		{Provider: "aws", InstanceType: xssNames[2], GPU: "H100", GPUCount: decimal.NewFromInt(8), OnDemand: &cheap},
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range xssNames {
		if _, err := b.st.UpsertLLMPriceOverride(ctx(), org.ID, owner.ID, store.LLMPriceOverrideInput{
			Model: n, Input: decimal.NewFromInt(3), Output: decimal.NewFromInt(12)}); err != nil {
			t.Fatal(err)
		}
	}

	bctx := browsertest.New(t, 4*time.Minute)
	if err := chromedp.Do(bctx,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard]`),
	); err != nil {
		t.Fatal(err)
	}

	// check opens page, shows every tooltip of the charts matching sel and
	// returns their texts, failing on script run or a CSP report.
	check := func(t *testing.T, page, sel string) string {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Navigate(base+page), chromedp.WaitVisible(sel+` svg`)); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		res, err := chromedp.Run(bctx, chromedp.Evaluate[tipReport](`(() => {
			`+cspRecorder+`
			const out = {charts: 0, shown: 0, texts: [], injected: []};
			const seen = new Set();
			for (const el of document.querySelectorAll(`+quote(sel)+`)) {
				const chart = echarts.getInstanceByDom(el);
				if (!chart) continue;
				out.charts++;
				chart.getOption().series.forEach((s, seriesIndex) => {
					for (let dataIndex = 0; dataIndex < s.data.length; dataIndex++) {
						chart.dispatchAction({type: "showTip", seriesIndex, dataIndex});
						// The chart's first child holds the drawing; the
						// tooltip comes after it.
						for (const tip of [...el.children].slice(1)) {
							out.shown++;
							seen.add(tip.innerText);
							for (const bad of tip.querySelectorAll("img, svg, script, iframe, object")) out.injected.push(bad.outerHTML);
						}
					}
				});
			}
			out.texts = [...seen];
			return out;
		})()`))
		if err != nil {
			t.Fatalf("%s: hover: %v", page, err)
		}
		if res.Charts == 0 || res.Shown == 0 {
			t.Fatalf("%s: %d charts, %d tooltips shown", page, res.Charts, res.Shown)
		}
		if len(res.Injected) > 0 {
			t.Errorf("%s: markup from data inside a tooltip: %q", page, res.Injected)
		}
		// And a person's mouse, across every chart at mid-height.
		for i := 0; i < res.Charts; i++ {
			bx, err := chromedp.Run(bctx, chromedp.Evaluate[[4]float64](fmt.Sprintf(`(() => {
				const el = document.querySelectorAll(%s)[%d];
				el.scrollIntoView({block: "center"});
				const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`, quote(sel), i)))
			if err != nil {
				t.Fatal(err)
			}
			for x := bx[0] + 5; x < bx[0]+bx[2]; x += bx[2] / 40 {
				if err := chromedp.Do(bctx, chromedp.MouseEvent("mouseMoved", x, bx[1]+bx[3]/2)); err != nil {
					t.Fatal(err)
				}
			}
		}
		// onerror and onload run after the image fails or the SVG loads.
		if err := chromedp.Do(bctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		pwned, err := chromedp.Run(bctx, chromedp.Evaluate[string](`String(window.__pwned)`))
		if err != nil || pwned != "undefined" {
			t.Fatalf("%s: window.__pwned = %s (%v): a name ran as script", page, pwned, err)
		}
		csp, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.__csp`))
		if err != nil || len(csp) > 0 {
			t.Errorf("%s: CSP violations %q (%v)", page, csp, err)
		}
		return strings.Join(res.Texts, "\n")
	}

	t.Run("Dashboard", func(t *testing.T) {
		for _, group := range []string{"provider", "service", "account", "team", "model", "source"} {
			for _, view := range []string{"daily", "cumulative"} {
				page := "/dashboard?range=30d&group=" + group + "&chart=" + view
				text := check(t, page, `[data-testid=chart]`)
				for _, n := range xssNames {
					suffix := " (monthly, per day): "
					if view == "cumulative" {
						suffix = " (monthly, pace): "
					}
					if !strings.Contains(text, "Budget: "+n+suffix) {
						t.Errorf("%s: no budget %q as text in the tooltips:\n%s", page, n, text)
					}
					if view == "daily" && group != "source" && !strings.Contains(text, "\n"+n+": ") {
						t.Errorf("%s: no series %q as text in the tooltips:\n%s", page, n, text)
					}
				}
				if view == "daily" && !regexp.MustCompile(`Unusual day: [\d,.]+ [A-Z]{3} — More than`).MatchString(text) {
					t.Errorf("%s: no unusual day in the tooltips:\n%s", page, text)
				}
			}
		}
	})

	t.Run("Advisor", func(t *testing.T) {
		text := check(t, "/advisor", `#advice-chart`)
		for _, n := range xssNames {
			if !strings.Contains(text, n) {
				t.Errorf("advisor: no %q as text in the tooltips:\n%s", n, text)
			}
		}
	})

	t.Run("BreakEven", func(t *testing.T) {
		page := "/breakeven?" + url.Values{"models": {strings.Join(xssNames, ",")}}.Encode()
		text := check(t, page, `#breakeven-chart`)
		for _, n := range xssNames {
			if !strings.Contains(text, "API: "+n) {
				t.Errorf("break-even: no %q as text in the tooltips:\n%s", n, text)
			}
		}
	})
}
