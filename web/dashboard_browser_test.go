package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web/browsertest"
)

// TestBrowserDashboardChartAndFilters logs in to a demo org in a real
// (headless) browser, checks that ECharts drew the chart (an SVG inside
// the chart container, with the providers in its legend), then changes
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
	svgText, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=chart][data-currency=USD] svg').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"AWS", "Google Cloud", "Budget: All cloud and LLM spend", "Unusual day"} {
		if !strings.Contains(legend, want) || !strings.Contains(svgText, want) {
			t.Errorf("legend %q (drawn: %.200q) lacks %q", legend, svgText, want)
		}
	}

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('[data-testid=filter-group]'); s.value = 'model';
			s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(usdChart+`[data-legend*="gpt-4o"] svg`)); err != nil {
		t.Fatal(err)
	}
	svgText, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=chart][data-currency=USD] svg').textContent`))
	if err != nil || !strings.Contains(svgText, "claude-sonnet-4-5") {
		t.Fatalf("chart by model: %.300q, %v", svgText, err)
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
