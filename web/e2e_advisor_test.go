package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// TestBrowserAdvisorAndBreakEvenUpdateInPlace opens the advisor and the
// break-even page in a real browser, changes an input, and sees htmx swap
// in new results with a freshly drawn ECharts chart (SVG in the chart div).
func TestBrowserAdvisorAndBreakEvenUpdateInPlace(t *testing.T) {
	t.Parallel()
	b, url := liveServer(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Chart Co"})

	ctx := browsertest.New(t, 90*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(url+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`input[name=password]`),
		chromedp.WaitVisible(`[data-testid=org-switcher]`),
	)
	if err != nil {
		t.Fatal(err)
	}

	// change sets a form control's value and fires the change event a user's
	// edit would, after marking the current chart so its replacement shows.
	change := func(chart, sel, value string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tgt *chromedp.Target) (chromedp.Void, error) {
			_, err := chromedp.Evaluate[bool](`(() => {
				document.querySelector(`+quote(chart)+`).setAttribute("data-old", "1");
				const el = document.querySelector(`+quote(sel)+`);
				el.value = `+quote(value)+`;
				el.dispatchEvent(new Event("change", {bubbles: true}));
				return true;
			})()`)(ctx, tgt)
			return chromedp.Void{}, err
		}
	}

	t.Run("Advisor", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(url+"/advisor"),
			chromedp.WaitVisible(`#advice-chart svg`),
		)
		if err != nil {
			t.Fatal(err)
		}
		before, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=advice-summary]`))
		if err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			change(`#advice-chart`, `select[name=model]`, "llama-3.1-70b"),
			chromedp.WaitVisible(`#advice-chart:not([data-old]) svg`),
		)
		if err != nil {
			t.Fatal(err)
		}
		after, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=advice-summary]`))
		if err != nil {
			t.Fatal(err)
		}
		if after == before || after == "" {
			t.Fatalf("summary did not change: %q", after)
		}
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		if !strings.HasSuffix(loc, "/advisor") {
			t.Fatalf("the page navigated to %s instead of updating in place", loc)
		}
	})

	t.Run("BreakEven", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.Navigate(url+"/breakeven"),
			chromedp.WaitVisible(`#breakeven-chart svg`),
		)
		if err != nil {
			t.Fatal(err)
		}
		before, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=api-cost]`))
		if err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			change(`#breakeven-chart`, `input[name=input_tokens]`, "5B"),
			chromedp.WaitVisible(`#breakeven-chart:not([data-old]) svg`),
		)
		if err != nil {
			t.Fatal(err)
		}
		after, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=api-cost]`))
		if err != nil {
			t.Fatal(err)
		}
		if after == before {
			t.Fatalf("API cost did not change: %q", after)
		}
	})
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
