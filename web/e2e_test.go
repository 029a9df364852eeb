package web_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
	"github.com/burnrate/burnrate/web/browsertest"
)

// TestBrowserSignupLandsOnDashboard signs up in a real (headless) browser
// and lands on the empty dashboard with its call to action.
func TestBrowserSignupLandsOnDashboard(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	t.Cleanup(ts.Close)
	ts.Config.Handler = web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), st, web.Config{BaseURL: ts.URL})

	ctx := browsertest.New(t, 60*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(ts.URL+"/signup"),
		chromedp.WaitVisible(`[data-testid=signup-form]`),
		chromedp.SendKeys(`input[name=name]`, "Ada Lovelace"),
		chromedp.SendKeys(`input[name=email]`, "ada@example.com"),
		chromedp.SendKeys(`input[name=password]`, "analytical engine"),
		chromedp.SendKeys(`input[name=org_name]`, "Engine Room"),
		chromedp.Submit(`[data-testid=signup-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard-empty]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(loc, "/dashboard") {
		t.Fatalf("landed on %s, want /dashboard", loc)
	}
	cta, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=upload-cta]`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cta, "Upload your first bill") {
		t.Fatalf("call to action = %q", cta)
	}
	org, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=org-switcher]`))
	if err != nil || !strings.Contains(org, "Engine Room") {
		t.Fatalf("org switcher = %q, %v", org, err)
	}
}
