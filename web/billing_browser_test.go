package web_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// TestBrowserBillingUpgrade: an owner opens Settings → Billing in a real
// (headless) browser, sees the plan and the usage bars, clicks Upgrade, and
// is sent (303) to the Checkout session's URL that stripe-mock returned. The
// machine has no way out to Stripe, so the test watches the navigation
// rather than the page at the end of it.
func TestBrowserBillingUpgrade(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	t.Cleanup(ts.Close)
	b := setupBilling(t, true, ts.URL)
	ts.Config.Handler = b.srv
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Acme"})

	ctx := browsertest.New(t, 60*time.Second)
	var mu sync.Mutex
	var redirects []string // URLs the app redirected the browser to
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.RedirectResponse != nil &&
			strings.HasPrefix(e.RedirectResponse.URL, ts.URL+"/settings/billing/checkout") && e.RedirectResponse.Status == 303 {
			mu.Lock()
			redirects = append(redirects, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard-empty]`),
		chromedp.Navigate(ts.URL+"/settings"),
		chromedp.Click(`[data-testid=billing-link]`),
		chromedp.WaitVisible(`[data-testid=usage-rows] progress`),
	)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=plan-name]`))
	if err != nil || plan != "Free" {
		t.Fatalf("plan = %q, %v", plan, err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=usage-rows-text]`))
	if err != nil || !strings.HasPrefix(rows, "0 of 10,000 rows") {
		t.Fatalf("rows usage = %q, %v", rows, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`[data-testid=upgrade-team-monthly]`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(b.mock.Requests("POST", "/v1/checkout/sessions")) == 1 })
	var created struct {
		URL  string `json:"url"`
		Mode string `json:"mode"`
	}
	req := b.mock.Requests("POST", "/v1/checkout/sessions")[0]
	if err := json.Unmarshal(req.Response, &created); err != nil || created.URL == "" {
		t.Fatalf("stripe-mock's session: %s (%v)", req.Response, err)
	}
	if req.Form.Get("line_items[0][price]") != "price_team_monthly" || created.Mode != "subscription" {
		t.Fatalf("session asked for %v, mode %q", req.Form, created.Mode)
	}
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(redirects) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if redirects[0] != created.URL {
		t.Fatalf("the browser was sent to %q, want stripe-mock's Checkout URL %q", redirects[0], created.URL)
	}
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("timed out waiting")
}
