package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/burnrate/burnrate/access"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// cspRecorder, run in a loaded page, collects in window.__csp the page's
// CSP violations, those from before it ran too (the reports are buffered).
const cspRecorder = `window.__csp = [];
	new ReportingObserver((reports) => {
		for (const r of reports) window.__csp.push(r.body.effectiveDirective + " " + r.body.sample + " " + r.body.sourceFile + ":" + r.body.lineNumber);
	}, {types: ["csp-violation"], buffered: true}).observe();`

// TestBrowserBehavioursWorkWithoutInlineScript drives, in a real browser
// under the app's CSP (which must forbid inline script), what used to be
// inline event handlers: the dashboard's From and To make the range
// custom, a member's role select submits itself, and deleting a budget, a
// break-even scenario or a member asks first — nothing happens when the
// answer is no, and it is done when yes. The CSP reports no violation.
func TestBrowserBehavioursWorkWithoutInlineScript(t *testing.T) {
	t.Parallel()
	b, base := liveServer(t)
	org, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Confirmers"})
	_, token, err := b.st.CreateAPIToken(ctx(), org.ID, "t", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, focus := hostileBills([]string{"AWS"})
	postImport(t, b, token, "focus", "focus.csv", focus)
	rec := httptest.NewRecorder()
	b.srv.ServeHTTP(rec, apiRequest(http.MethodPost, "/api/v1/budgets", token, `{"name":"Everything","amount":"100"}`))
	wantStatus(t, rec, http.StatusCreated)
	var bud struct{ ID int64 }
	if err := json.Unmarshal(rec.Body.Bytes(), &bud); err != nil {
		t.Fatal(err)
	}
	sc, err := b.st.CreateScenario(ctx(), org.ID, owner.ID, store.ScenarioBreakEven, "Saved one",
		json.RawMessage(`{"model":"gpt-4.1-mini","input_tokens":1e8,"output_tokens":1e7}`))
	if err != nil {
		t.Fatal(err)
	}
	viewer := storetest.Member(t, b.st, org, access.Viewer)
	leaver := storetest.Member(t, b.st, org, access.Viewer)

	bctx := browsertest.New(t, 2*time.Minute)
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

	// open loads a page, records CSP reports and answers confirm() with
	// answer, recording the questions.
	open := func(t *testing.T, path, waitFor string, answer bool) {
		t.Helper()
		ans := "false"
		if answer {
			ans = "true"
		}
		// A form the last step submitted may still be landing (its POST's
		// redirect): the browser aborts one of two navigations, so an
		// aborted one is tried again.
		err := chromedp.Do(bctx, chromedp.Navigate(base+path))
		for try := 0; err != nil && strings.Contains(err.Error(), "net::ERR_ABORTED") && try < 3; try++ {
			time.Sleep(200 * time.Millisecond)
			err = chromedp.Do(bctx, chromedp.Navigate(base+path))
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := chromedp.Do(bctx,
			chromedp.WaitVisible(waitFor),
			chromedp.Evaluate[chromedp.Void](`(() => {
				`+cspRecorder+`
				window.__asked = [];
				window.confirm = (q) => { window.__asked.push(q); return `+ans+`; };
				return true;
			})()`),
		); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		// The CSP this page came with forbids inline script.
		csp, err := chromedp.Run(bctx, chromedp.Evaluate[string](`fetch(location.href).then((r) => r.headers.get("content-security-policy"))`,
			chromedp.EvalAwaitPromise))
		if src, _ := scriptSrc(csp); err != nil || src != "script-src 'self'" {
			t.Fatalf("%s: CSP %q (%v): inline script is allowed", path, csp, err)
		}
	}
	// asked is what confirm() was asked on the current page, which is still
	// the page open loaded (a navigation would have dropped __asked).
	asked := func(t *testing.T) []string {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		qs, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.__asked`))
		if err != nil {
			t.Fatalf("the page navigated away: %v", err)
		}
		return qs
	}
	noViolations := func(t *testing.T) {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Sleep(200*time.Millisecond)); err != nil { // reports come in a task of their own
			t.Fatal(err)
		}
		csp, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`window.__csp || []`))
		if err != nil || len(csp) > 0 {
			t.Errorf("CSP violations %q (%v)", csp, err)
		}
	}

	t.Run("DashboardDatesMakeTheRangeCustom", func(t *testing.T) {
		open(t, "/dashboard?range=30d", `[data-testid=filter-from]`, true)
		from := testNow.UTC().AddDate(0, 0, -10).Format(time.DateOnly)
		if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`(() => {
			const el = document.querySelector("[data-testid=filter-from]");
			el.value = `+quote(from)+`;
			el.dispatchEvent(new Event("change", {bubbles: true}));
			return true;
		})()`)); err != nil {
			t.Fatal(err)
		}
		// htmx swaps in the custom view and puts it in the URL.
		waitJS(t, bctx, `document.querySelector("[data-testid=filter-range]").value === "custom" && location.search.includes("range=custom")`)
		loc, err := chromedp.Run(bctx, chromedp.Location())
		if err != nil || !strings.Contains(loc, "range=custom") || !strings.Contains(loc, "from="+from) {
			t.Fatalf("URL after changing From = %q (%v), want range=custom&from=%s", loc, err, from)
		}
		noViolations(t)
	})

	// Typed digit by digit (month, day, year, as this locale writes dates),
	// a date counts once typed (Enter here; leaving the field too): a
	// reload at the first digit replaced the field under the cursor and
	// lost the rest.
	t.Run("DashboardDateTypedCountsWhenDone", func(t *testing.T) {
		open(t, "/dashboard?range=30d", `[data-testid=filter-from]`, true)
		day := testNow.UTC().AddDate(0, 0, -12)
		if err := chromedp.Do(bctx,
			chromedp.Focus(`[data-testid=filter-from]`),
			chromedp.SendKeys(`[data-testid=filter-from]`, day.Format("01022006")),
			chromedp.Sleep(500*time.Millisecond),
		); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]any](`({
			search: location.search,
			focused: document.activeElement === document.querySelector("[data-testid=filter-from]"),
			value: document.querySelector("[data-testid=filter-from]").value,
		})`))
		if err != nil {
			t.Fatal(err)
		}
		if got["search"] != "?range=30d" || got["focused"] != true || got["value"] != day.Format(time.DateOnly) {
			t.Fatalf("while typing: %v; want the view unchanged, the field focused and holding %s", got, day.Format(time.DateOnly))
		}
		if err := chromedp.Do(bctx, chromedp.KeyEvent(kb.Enter)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, bctx, `location.search.includes("range=custom") && location.search.includes("from=`+day.Format(time.DateOnly)+`")`)
		// Leaving the field, to the next control.
		to := day.AddDate(0, 0, 5)
		if err := chromedp.Do(bctx,
			chromedp.Focus(`[data-testid=filter-to]`),
			chromedp.SendKeys(`[data-testid=filter-to]`, to.Format("01022006")),
			chromedp.Sleep(300*time.Millisecond),
			chromedp.Focus(`[data-testid=filter-group]`),
		); err != nil {
			t.Fatal(err)
		}
		waitJS(t, bctx, `location.search.includes("to=`+to.Format(time.DateOnly)+`")`)
		noViolations(t)
	})

	t.Run("DeleteBudgetAsksFirst", func(t *testing.T) {
		page := "/budgets/" + itoa(bud.ID)
		open(t, page, `[data-testid=delete-budget] button`, false)
		if err := chromedp.Do(bctx, chromedp.Click(`[data-testid=delete-budget] button`)); err != nil {
			t.Fatal(err)
		}
		if qs := asked(t); len(qs) != 1 || qs[0] != "Delete this budget and its alert history?" {
			t.Fatalf("asked %q", qs)
		}
		if _, err := b.st.Budget(ctx(), org.ID, bud.ID); err != nil {
			t.Fatalf("the budget went on a no: %v", err)
		}
		noViolations(t)
		open(t, page, `[data-testid=delete-budget] button`, true)
		if err := chromedp.Do(bctx, chromedp.Click(`[data-testid=delete-budget] button`), chromedp.WaitVisible(`[data-testid=new-budget]`)); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.Budget(ctx(), org.ID, bud.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the budget is still there on a yes: %v", err)
		}
	})

	t.Run("DeleteScenarioAsksFirst", func(t *testing.T) {
		form := `[data-testid=scenario-row] form`
		open(t, "/breakeven", form+` button`, false)
		if err := chromedp.Do(bctx, chromedp.Click(form+` button`)); err != nil {
			t.Fatal(err)
		}
		if qs := asked(t); len(qs) != 1 || qs[0] != "Delete this scenario?" {
			t.Fatalf("asked %q", qs)
		}
		if _, err := b.st.Scenario(ctx(), org.ID, sc.ID); err != nil {
			t.Fatalf("the scenario went on a no: %v", err)
		}
		noViolations(t)
		open(t, "/breakeven", form+` button`, true)
		if err := chromedp.Do(bctx, chromedp.Click(form+` button`), chromedp.WaitNotPresent(`[data-testid=scenario-row]`)); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.Scenario(ctx(), org.ID, sc.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the scenario is still there on a yes: %v", err)
		}
	})

	t.Run("RoleSelectSubmitsItself", func(t *testing.T) {
		open(t, "/members", `[data-testid=member-row] select[name=role]`, true)
		if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`(() => {
			const row = [...document.querySelectorAll("[data-testid=member-row]")].find((r) => r.textContent.includes(`+quote(viewer.Email)+`));
			const sel = row.querySelector("select[name=role]");
			sel.value = "member";
			sel.dispatchEvent(new Event("change", {bubbles: true}));
			return true;
		})()`)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			m, err := b.st.Membership(ctx(), org.ID, viewer.ID)
			if err == nil && m.Role == access.Member {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("role after changing the select = %v (%v), want member", m.Role, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("RemoveMemberAsksFirst", func(t *testing.T) {
		remove := `(() => {
			const row = [...document.querySelectorAll("[data-testid=member-row]")].find((r) => r.textContent.includes(` + quote(leaver.Email) + `));
			row.querySelector("form[action$='/remove'] button").click();
			return true;
		})()`
		open(t, "/members", `[data-testid=member-row]`, false)
		if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](remove)); err != nil {
			t.Fatal(err)
		}
		if qs := asked(t); len(qs) != 1 || qs[0] != "Remove this member?" {
			t.Fatalf("asked %q", qs)
		}
		if _, err := b.st.Membership(ctx(), org.ID, leaver.ID); err != nil {
			t.Fatalf("the member went on a no: %v", err)
		}
		noViolations(t)
		open(t, "/members", `[data-testid=member-row]`, true)
		if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](remove)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := b.st.Membership(ctx(), org.ID, leaver.ID)
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the member is still there on a yes: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// waitJS waits up to 10 seconds for the expression to be true in the page.
func waitJS(t *testing.T, bctx context.Context, expr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 10s for %s: %v", expr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
