package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/burnrate/burnrate/ingest"
	"github.com/burnrate/burnrate/pricing"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// TestBrowserDashboardChartAndFilters logs in to a demo org in a real
// (headless) browser, checks that ECharts drew the chart (an SVG inside
// the chart container, with the providers in the legend above it), then changes
// the group-by filter and checks that htmx redrew it in place, by model,
// with the view in the URL.
func TestBrowserDashboardChartAndFilters(t *testing.T) {
	t.Parallel()
	b, url := liveServer(t)
	_, owner, _, _ := demoOrg(t, b)

	ctx := browsertest.New(t, 90*time.Second)
	const usdChart = `[data-testid=chart][data-currency=USD]`
	err := chromedp.Do(ctx,
		chromedp.Navigate(url+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard]`),
		chromedp.Navigate(url+"/dashboard?range=90d"),
		chromedp.WaitVisible(usdChart+` svg`),
	)
	if err != nil {
		t.Fatal(err)
	}
	attr, err := chromedp.Run(ctx, chromedp.AttributeValue(usdChart, "data-legend"))
	if err != nil {
		t.Fatal(err)
	}
	legend := attr.Value
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=chart-legend][data-currency=USD]').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"AWS", "Google Cloud", "Budget: All cloud and LLM spend", "Unusual day"} {
		if !strings.Contains(legend, want) || !strings.Contains(shown, want) {
			t.Errorf("legend %q (shown: %.200q) lacks %q", legend, shown, want)
		}
	}

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('[data-testid=filter-group]'); s.value = 'model';
			s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(usdChart+`[data-legend*="gpt-4o"] svg`)); err != nil {
		t.Fatal(err)
	}
	shown, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=chart-legend][data-currency=USD]').textContent`))
	if err != nil || !strings.Contains(shown, "claude-sonnet-4-5") {
		t.Fatalf("chart by model: legend %.300q, %v", shown, err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.Contains(loc, "group=model") || !strings.Contains(loc, "range=90d") {
		t.Fatalf("URL after filtering = %q (%v), want the view in it", loc, err)
	}
	// htmx swapped the dashboard in place: no page load.
	navs, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`performance.getEntriesByType('navigation').length`))
	if err != nil || navs != 1 {
		t.Fatalf("navigations = %v, %v", navs, err)
	}
}

// TestBrowserChartLegendEverySeries draws the dashboard grouped by model
// for an org with 14 models and two budgets in each of two currencies, at
// 1440×900 and 390×844, and checks each currency's legend: every series the
// chart draws is in it, budget lines first, each entry visible and the
// topmost element at its place (reachable, not under anything), the legend
// above the plot (never over the axes), the 12 spend series (11 models and
// Other) in 12 colours, and pressing an entry hides its series.
func TestBrowserChartLegendEverySeries(t *testing.T) {
	t.Parallel()
	b, url := liveServer(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Many models"})
	today := testNow.UTC().Truncate(24 * time.Hour)
	var csv strings.Builder
	csv.WriteString("starting_at,amount,currency,model,cost_type,workspace_id\n")
	for i := 1; i <= 20; i++ {
		day := today.AddDate(0, 0, -i).Format(time.RFC3339)
		for m := range 14 {
			fmt.Fprintf(&csv, "%s,%d,USD,claude-test-model-%02d,tokens,ws\n", day, 1000*(m+1)+i, m)
			fmt.Fprintf(&csv, "%s,%d,EUR,mistral-test-model-%02d,tokens,ws\n", day, 500*(m+1)+i, m)
		}
	}
	im := ingest.NewImporter(b.st, ingest.PriceTable(pricing.DefaultLLMPrices()), pricing.DefaultCatalog())
	if _, err := im.Import(ctx(), ingest.ImportRequest{Org: org, FileName: "cost.csv", Source: "anthropic-cost", Via: "test"},
		strings.NewReader(csv.String())); err != nil {
		t.Fatal(err)
	}
	for _, in := range []store.BudgetInput{
		{Name: "LLM per day", Amount: decimal.NewFromInt(900), Currency: "USD", Period: "daily"},
		{Name: "LLM per month", Amount: decimal.NewFromInt(20000), Currency: "USD", Period: "monthly"},
		{Name: "EU per day", Amount: decimal.NewFromInt(500), Currency: "EUR", Period: "daily"},
		{Name: "EU per month", Amount: decimal.NewFromInt(9000), Currency: "EUR", Period: "monthly"},
	} {
		if _, err := b.st.CreateBudget(ctx(), org.ID, 0, in); err != nil {
			t.Fatal(err)
		}
	}

	tab := browsertest.New(t, 3*time.Minute)
	if err := chromedp.Do(tab,
		chromedp.Navigate(url+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard]`),
	); err != nil {
		t.Fatal(err)
	}
	for _, sz := range widths {
		if err := chromedp.Do(tab, chromedp.EmulateViewport(sz.w, sz.h), chromedp.Navigate(url+"/dashboard?range=30d&group=model"),
			chromedp.WaitVisible(`[data-testid=chart][data-currency=EUR] svg`)); err != nil {
			t.Fatal(err)
		}
		for _, cur := range []string{"USD", "EUR"} {
			got, err := chromedp.Run(tab, chromedp.Evaluate[map[string]any](`(async () => {
				const cur = "`+cur+`";
				const box = document.querySelector('[data-testid=chart][data-currency=' + cur + ']');
				const list = document.querySelector('[data-testid=chart-legend][data-currency=' + cur + ']');
				const out = {drawn: (box.dataset.legend || "").split("|"), names: [], problems: [], colours: []};
				if (!list) { out.problems.push("no legend list"); return out; }
				for (const btn of list.querySelectorAll('button')) {
					const name = btn.textContent.trim();
					out.names.push(name);
					btn.scrollIntoView({block: "center"});
					await new Promise(r => requestAnimationFrame(r));
					const r = btn.getBoundingClientRect();
					const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
					if (r.width < 1 || r.height < 1 || r.left < 0 || r.right > innerWidth || !hit || !btn.contains(hit)) {
						out.problems.push(name + ": not visible at its place (" + Math.round(r.left) + "," + Math.round(r.top) + " " +
							Math.round(r.width) + "×" + Math.round(r.height) + ", topmost " + (hit ? hit.tagName : "none") + ")");
					}
					if (getComputedStyle(btn).color === getComputedStyle(document.body).backgroundColor) out.problems.push(name + ": written in the background's colour");
					if (!name.startsWith("Budget:") && name !== "Unusual day") {
						out.colours.push(getComputedStyle(btn.querySelector('.legend-swatch')).backgroundColor);
					}
				}
				const lr = list.getBoundingClientRect(), br = box.getBoundingClientRect();
				const grid = echarts.getInstanceByDom(box).getModel().getComponent('grid').coordinateSystem.getRect();
				if (lr.bottom > br.top + grid.y) out.problems.push("legend bottom " + lr.bottom + " below the plot's top " + (br.top + grid.y));
				// Pressing an entry hides its series.
				const last = list.querySelector('li:last-child button');
				last.click();
				const sel = echarts.getInstanceByDom(box).getOption().legend[0].selected || {};
				if (sel[last.dataset.series] !== false || last.getAttribute('aria-pressed') !== 'false') out.problems.push("pressing " + last.dataset.series + " did not hide it");
				last.click();
				return out;
			})()`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			where := fmt.Sprintf("%s chart at %s", cur, sz.name)
			for _, p := range got["problems"].([]any) {
				t.Errorf("%s: %v", where, p)
			}
			drawn := fmt.Sprint(got["drawn"])
			var legend []string
			for _, n := range got["names"].([]any) {
				legend = append(legend, n.(string))
			}
			// Two budgets, the 11 top models and Other.
			if fmt.Sprint(got["drawn"]) != fmt.Sprint(got["names"]) || len(legend) != 14 {
				t.Errorf("%s: legend %q, drawn %s", where, legend, drawn)
			}
			if len(legend) >= 2 && (!strings.HasPrefix(legend[0], "Budget: ") || !strings.HasPrefix(legend[1], "Budget: ")) {
				t.Errorf("%s: budget lines not first: %q", where, legend)
			}
			colours := map[string]bool{}
			for i, c := range got["colours"].([]any) {
				if i < 12 {
					colours[c.(string)] = true
				}
			}
			if len(colours) != 12 {
				t.Errorf("%s: %d colours among the first 12 series: %v", where, len(colours), got["colours"])
			}
		}
	}

	// Two currencies: each daily table is closed, and opening it fetches
	// its rows, once.
	if err := chromedp.Do(tab,
		chromedp.Click(`[data-testid=daily-table-details]:nth-of-type(2) summary`),
		chromedp.WaitVisible(`[data-testid=daily-table][data-currency=EUR] tbody tr`),
	); err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=daily-table] tbody tr').length`))
	if err != nil {
		t.Fatal(err)
	}
	if rows != 30 {
		t.Errorf("opened the EUR daily table: %d rows in tables, want the range's 30 days", rows)
	}
}

// TestBrowserTablesFitWithLongAccountIDs: Oracle Cloud accounts are
// OCIDs of 80-odd characters without a break; in the drivers table, and
// in the day-over-day and week-over-week tables grouped by account, they
// wrap, so at 1280 px each table fits its box and the amounts beside them
// are in view without scrolling.
func TestBrowserTablesFitWithLongAccountIDs(t *testing.T) {
	t.Parallel()
	b, url := liveServer(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	_, token, _ := b.st.CreateAPIToken(ctx(), org.ID, "ci", owner.ID)
	imp := apiImport(t, b, token, "oci.csv", mustRead(t, "../ingest/testdata/exports/oci/oci_focus_report.csv"))
	day := imp["period_end"].(string) // the file's one day
	next, _ := time.Parse(time.DateOnly, day)

	tab := browsertest.New(t, 90*time.Second)
	if err := chromedp.Do(tab,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(url+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard]`),
	); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct{ query, table, wait string }{
		{"from=" + day + "&to=" + day, "drivers", "driver-row"},
		// The day after: the account's spend against the day before.
		{"from=" + day + "&to=" + next.AddDate(0, 0, 1).Format(time.DateOnly) + "&group=account", "movers-dod", "mover-row"},
	} {
		if err := chromedp.Do(tab,
			chromedp.Navigate(url+"/dashboard?range=custom&"+v.query),
			chromedp.WaitVisible(`[data-testid=`+v.table+`] [data-testid=`+v.wait+`]`),
		); err != nil {
			t.Fatalf("%s: %v", v.query, err)
		}
		got, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => {
			const box = document.querySelector('[data-testid=`+v.table+`] .overflow-auto');
			const ocid = [...box.querySelectorAll('td')].some(td => td.textContent.startsWith('ocid1.'));
			const last = box.querySelector('tbody tr td:last-child').getBoundingClientRect();
			return (ocid ? "ocid " : "no-ocid ") + box.scrollWidth + "/" + box.clientWidth + " last column ends at " + Math.round(last.right) +
				" of " + Math.round(box.getBoundingClientRect().right);
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		var ocid string
		var scroll, client, lastRight, boxRight int
		if _, err := fmt.Sscanf(got, "%s %d/%d last column ends at %d of %d", &ocid, &scroll, &client, &lastRight, &boxRight); err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		if ocid != "ocid" || scroll > client || lastRight > boxRight {
			t.Errorf("%s table: %s; want an OCID account, no sideways scroll, and the last column in the box", v.table, got)
		}
	}
}
