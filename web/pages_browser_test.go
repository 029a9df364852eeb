package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// screenshotDir is where TestBrowserEveryPageAtEveryWidth leaves a full-page
// screenshot of each page at each width, for a reviewer to look at; it is
// git-ignored (the repo's /screenshots/).
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// widths are the two screens every page must fit: a laptop and a phone.
var widths = []struct {
	name string
	w, h int64
}{{"1440", 1440, 900}, {"390", 390, 844}}

// consoleLog collects what the pages of one browser tab write to the
// console, for the test to read after each page.
type consoleLog struct {
	mu   sync.Mutex
	msgs []chromedp.ConsoleMessage
}

func watchConsole(ctx context.Context) *consoleLog {
	l := &consoleLog{}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			l.mu.Lock()
			l.msgs = append(l.msgs, m)
			l.mu.Unlock()
		}
	}()
	return l
}

// errorsSince returns the errors and exceptions logged after the first n
// messages, and the count now.
func (l *consoleLog) errorsSince(n int) ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []string
	for _, m := range l.msgs[n:] {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			errs = append(errs, m.String()+" ("+m.URL+")")
		}
	}
	return errs, len(l.msgs)
}

// TestBrowserEveryPageAtEveryWidth walks every page of the app in one
// headless Chromium, at 1440×900 and at 390×844, as the owner of an org
// with the demo's data and as the owner of an empty org. On each it
// asserts that nothing is wider than the viewport and that the console
// shows no error, and writes a screenshot to screenshots/. On the demo's
// dashboard at 1440×900 it asserts the first screen: yesterday, an
// over-budget budget and the chart above the fold; and that every number
// in its tables and chart tooltip has its separators and its currency.
func TestBrowserEveryPageAtEveryWidth(t *testing.T) {
	t.Parallel()
	b, base := liveServer(t)
	demoOrgRow, owner, _, res := demoOrg(t, b)
	// A connection whose last run failed with a long error: the widest
	// row the Connections table has to fit.
	addFailedConnection(t, b.st, demoOrgRow.ID)
	_, emptyOwner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Empty"})
	dir := screenshotDir(t)
	importID := res.Files[0].ID
	budgetID := res.Budgets[0].ID

	browser := browsertest.New(t, 8*time.Minute)
	demoPages := []string{
		"/dashboard", "/dashboard?range=90d&group=model", "/dashboard?range=90d&chart=cumulative&team=inference",
		"/dashboard?range=custom&from=2020-01-01&to=2020-01-31",
		"/imports", fmt.Sprintf("/imports/%d", importID), "/connections", "/budgets", fmt.Sprintf("/budgets/%d", budgetID),
		"/budgets/new", fmt.Sprintf("/budgets/%d/edit", budgetID), "/advisor", "/breakeven", "/prices",
		"/settings", "/settings/notifications", "/settings/digest", "/settings/mail", "/members", "/tokens",
		"/account", "/orgs/new",
	}
	emptyPages := []string{"/dashboard", "/imports", "/budgets", "/advisor", "/breakeven", "/prices", "/tokens", "/settings"}
	public := []string{"/login", "/signup", "/password/forgot"}

	for _, who := range []struct {
		name, email string
		pages       []string
	}{{"demo", owner.Email, demoPages}, {"empty", emptyOwner.Email, emptyPages}} {
		// A browser context of its own: its own cookies.
		tab, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		defer cancel()
		console := watchConsole(tab)
		seen := 0
		check := func(t *testing.T, name string, w, h int64) {
			t.Helper()
			var errs []string
			errs, seen = console.errorsSince(seen)
			for _, e := range errs {
				t.Errorf("%s at %d: console: %s", name, w, e)
			}
			over, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => {
				const d = document.documentElement;
				if (d.scrollWidth <= innerWidth) return "";
				// Name the widest elements, for the message.
				const wide = [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > innerWidth + 1)
					.slice(-4).map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.split(" ").join(".") : "") + " " + Math.round(e.getBoundingClientRect().right));
				return d.scrollWidth + " > " + innerWidth + ": " + wide.join(", ");
			})()`))
			if err != nil {
				t.Fatal(err)
			}
			if over != "" {
				t.Errorf("%s at %d: wider than the viewport: %s", name, w, over)
			}
			if w >= 1440 {
				for _, c := range cutElements(t, tab) {
					t.Errorf("%s at %d: cut: %s", name, w, c)
				}
			}
			// The first screen as PNG; with SCREENSHOTS_FULL set, the whole
			// page too, as a (smaller, faster) JPEG.
			first, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			file := who.name + "-" + strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(name, "-"), "-") + "-" + strconv.FormatInt(w, 10)
			if err := os.WriteFile(filepath.Join(dir, file+".png"), first, 0o644); err != nil {
				t.Fatal(err)
			}
			// Whole pages take seconds each on a busy machine: on request.
			if os.Getenv("SCREENSHOTS_FULL") != "" {
				full, err := chromedp.Run(tab, chromedp.FullScreenshot(70))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, file+"-full.jpg"), full, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}

		for _, p := range public {
			if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+p), chromedp.WaitVisible(`main`)); err != nil {
				t.Fatal(err)
			}
			check(t, p, 390, 844)
		}
		if err := chromedp.Do(tab,
			chromedp.EmulateViewport(1440, 900),
			chromedp.Navigate(base+"/login"),
			chromedp.WaitVisible(`input[name=email]`),
			chromedp.SendKeys(`input[name=email]`, who.email),
			chromedp.SendKeys(`input[name=password]`, storetest.Password),
			chromedp.Submit(`[data-testid=login-form]`),
			// Not `main`: the log-in page has one too, and navigating
			// while its redirect is still under way aborts one or the
			// other (net::ERR_ABORTED, or a Navigate that never returns).
			chromedp.WaitNotPresent(`[data-testid=login-form]`),
			chromedp.WaitVisible(`main`),
		); err != nil {
			t.Fatal(err)
		}
		for _, sz := range widths {
			for _, p := range who.pages {
				steps := []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(sz.w, sz.h), chromedp.Navigate(base + p), chromedp.WaitVisible(`main`)}
				if strings.HasPrefix(p, "/dashboard") && who.name == "demo" {
					steps = append(steps, chromedp.WaitVisible(`[data-testid=dashboard]`))
					// A chart, or (a remembered view of days without spend) the
					// note that says where the data is.
					steps = append(steps, chromedp.WaitVisible(`[data-testid=chart] svg, [data-testid=empty-range]`))
				}
				start := time.Now()
				if err := chromedp.Do(tab, steps...); err != nil {
					t.Fatalf("%s at %s: %v", p, sz.name, err)
				}
				loaded := time.Since(start)
				if p == "/dashboard" && who.name == "demo" && sz.w == 1440 {
					checkFirstScreen(t, tab)
					checkDashboardNumbers(t, tab)
				}
				check(t, p, sz.w, sz.h)
				t.Logf("%s at %s: loaded in %v, checked in %v", p, sz.name, loaded.Round(time.Millisecond), (time.Since(start) - loaded).Round(time.Millisecond))
			}
		}
		// At 390 the nav is one Menu button that opens the links.
		if err := chromedp.Do(tab, chromedp.EmulateViewport(390, 844), chromedp.Navigate(base+"/budgets"), chromedp.WaitVisible(`[data-testid=nav-toggle]`)); err != nil {
			t.Fatal(err)
		}
		shown := func() bool {
			v, err := chromedp.Run(tab, chromedp.Evaluate[bool](`document.querySelector('[data-testid=nav-links]').offsetParent !== null`))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if shown() {
			t.Errorf("%s: nav links shown at 390 px before the Menu button is pressed", who.name)
		}
		if err := chromedp.Do(tab, chromedp.Click(`[data-testid=nav-toggle]`), chromedp.WaitVisible(`[data-testid=nav-links] a[href="/prices"]`)); err != nil {
			t.Fatal(err)
		}
		check(t, "nav-open", 390, 844)
		if cur, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector('[data-testid=nav-links] a[aria-current=page]').textContent`)); err != nil || cur != "Budgets" {
			t.Errorf("%s: current nav item = %q (%v), want Budgets", who.name, cur, err)
		}
	}
}

// cutElements lists what is wider than the box that holds it on the
// current page: a box that scrolls or clips sideways (a table's scroll
// container) with more content than room, or an element whose right edge
// passes its scroll container's or the viewport's. At 1440 px nothing may
// be: a page that fits its viewport can still cut a table inside its own
// container (the movers' tables, side by side, were).
func cutElements(t *testing.T, tab context.Context) []string {
	t.Helper()
	cut, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`(() => {
		const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
			(typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\s+/).join(".") : "") +
			(e.closest("[data-testid]") ? " in [data-testid=" + e.closest("[data-testid]").dataset.testid + "]" : "");
		const out = [];
		for (const e of document.querySelectorAll("main *")) {
			if (e.closest("[data-testid=chart]") || e.offsetParent === null) continue; // the chart draws its own SVG
			const cs = getComputedStyle(e);
			if (["auto", "scroll", "hidden", "clip"].includes(cs.overflowX) && e.scrollWidth > e.clientWidth + 1) {
				out.push(name(e) + ": " + e.scrollWidth + " px of content in " + e.clientWidth);
			}
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	return cut
}

// checkFirstScreen asserts what a team lead sees without scrolling at
// 1440×900: yesterday's spend, the over-budget budget (first), the chart.
func checkFirstScreen(t *testing.T, tab context.Context) {
	t.Helper()
	got, err := chromedp.Run(tab, chromedp.Evaluate[map[string]any](`(() => {
		const r = sel => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect() : null; };
		const y = r('[data-testid=headline-currency] [data-testid=yesterday-spend]');
		const over = r('[data-testid=headline-budgets] [data-testid=budget-card][data-status=over]');
		const chart = r('[data-testid=chart]');
		// The over-budget card's edge in the over colour, as a probe
		// coloured by the same variable computes it.
		const overCard = document.querySelector('[data-testid=headline-budgets] [data-testid=budget-card][data-status=over]');
		const probe = document.body.appendChild(document.createElement('span'));
		probe.style.color = 'var(--br-over)';
		const overColour = getComputedStyle(probe).color;
		probe.remove();
		return {
			yesterday: document.querySelector('[data-testid=yesterday] header')?.textContent || "",
			spend: document.querySelector('[data-testid=yesterday-spend]')?.textContent || "",
			yesterdayBottom: y ? y.bottom : 1e9,
			overBottom: over ? over.bottom : 1e9,
			chartTop: chart ? chart.top : 1e9,
			chartBottom: chart ? chart.bottom : 1e9,
			fold: innerHeight,
			overEdge: overCard ? getComputedStyle(overCard).borderLeftColor : "",
			overColour,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got["overEdge"] != got["overColour"] {
		t.Errorf("over-budget card: edge %v, want the over colour %v", got["overEdge"], got["overColour"])
	}
	fold := got["fold"].(float64)
	if !strings.Contains(got["yesterday"].(string), "Yesterday") || !regexp.MustCompile(`^\d{1,3}(,\d{3})*\.\d\d [A-Z]{3}$`).MatchString(got["spend"].(string)) {
		t.Errorf("headline: %q %q, want yesterday's spend with its currency", got["yesterday"], got["spend"])
	}
	for _, k := range []string{"yesterdayBottom", "overBottom", "chartBottom"} {
		if v := got[k].(float64); v > fold {
			t.Errorf("first screen: %s at %.0f px, below the fold (%.0f px) — %v", k, v, fold, got)
		}
	}
}

// moneyText is a number as the app writes it: separators every three
// digits, and decimals; compact counts (1.2B) and percentages pass too.
var (
	digitsRun  = regexp.MustCompile(`[+-]?\d[\d,]*(\.\d+)?`)
	grouped    = regexp.MustCompile(`^[+-]?\d{1,3}(,\d{3})*(\.\d+)?$`)
	isoDate    = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
	currencyIn = regexp.MustCompile(`\d [A-Z]{3}\b`)
)

// checkNumbers reports a number of text written without its thousands
// separators.
func checkNumbers(t *testing.T, where, text string) {
	t.Helper()
	text = isoDate.ReplaceAllString(text, "")
	for _, n := range digitsRun.FindAllString(text, -1) {
		if !grouped.MatchString(n) {
			t.Errorf("%s: %q in %q lacks its separators", where, n, text)
		}
	}
}

// checkDashboardNumbers reads every number cell of the dashboard's tables,
// and the chart's tooltip on one day: separators everywhere, and money with
// its currency (in the cell, or in the caption of a table of one currency).
func checkDashboardNumbers(t *testing.T, tab context.Context) {
	t.Helper()
	cells, err := chromedp.Run(tab, chromedp.Evaluate[[][]string](`[...document.querySelectorAll('#dashboard td.num, #dashboard .daily-table td + td')].map(td =>
		[td.textContent.trim().replace(/\s+/g, " "), td.classList.contains("money") || td.closest(".daily-table") ? "money" : "",
		 td.closest("table").querySelector("caption")?.textContent || ""])`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) < 50 {
		t.Fatalf("only %d number cells on the dashboard", len(cells))
	}
	for _, c := range cells {
		checkNumbers(t, "dashboard table", c[0])
		if c[1] == "money" && !currencyIn.MatchString(c[0]) && !regexp.MustCompile(`Amounts in [A-Z]{3}`).MatchString(c[2]) {
			t.Errorf("money cell %q has no currency", c[0])
		}
	}
	tip, err := chromedp.Run(tab, chromedp.Evaluate[string](`(() => {
		const box = document.querySelector('[data-testid=chart]');
		const ch = echarts.getInstanceByDom(box);
		const days = ch.getOption().xAxis[0].data;
		ch.dispatchAction({type: "showTip", seriesIndex: 0, dataIndex: days.length - 2});
		const tip = document.querySelector('.chart-tip');
		return tip ? tip.innerText : "";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(tip), "\n")
	if len(lines) < 3 {
		t.Fatalf("tooltip = %q", tip)
	}
	for _, l := range lines[1:] {
		checkNumbers(t, "tooltip", l)
		if !currencyIn.MatchString(l) {
			t.Errorf("tooltip line %q has no currency", l)
		}
	}
}
