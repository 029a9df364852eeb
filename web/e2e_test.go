package web_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
	"github.com/burnrate/burnrate/web/browsertest"
)

// liveServer serves a fresh database on a real loopback port, for the
// browser tests.
func liveServer(t *testing.T) (*bundle, string) {
	t.Helper()
	st := storetest.New(t)
	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	t.Cleanup(ts.Close)
	b := &bundle{st: st, srv: web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{BaseURL: ts.URL}), web.Config{Now: testClock})}
	ts.Config.Handler = b.srv
	return b, ts.URL
}

// TestBrowserSignupLandsOnDashboard signs up in a real (headless) browser
// and lands on the empty dashboard with its call to action.
func TestBrowserSignupLandsOnDashboard(t *testing.T) {
	t.Parallel()
	_, url := liveServer(t)

	ctx := browsertest.New(t, 60*time.Second)
	err := chromedp.Do(ctx,
		chromedp.Navigate(url+"/signup"),
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

// TestBrowserUpload uploads a bill and a broken file through the form, as a
// person would, and sees the summary of one and the error of the other.
func TestBrowserUpload(t *testing.T) {
	t.Parallel()
	b, url := liveServer(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Uploaders"})

	sample, err := filepath.Abs(focusSample)
	if err != nil {
		t.Fatal(err)
	}
	broken, err := filepath.Abs("../ingest/testdata/exports/azure/empty_frame.csv")
	if err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.New(t, 60*time.Second)
	err = chromedp.Do(ctx,
		chromedp.Navigate(url+"/login"),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard-empty]`),
		chromedp.Navigate(url+"/imports"),
		chromedp.SetUploadFiles(`[data-testid=upload-form] input[type=file]`, []string{sample, broken}),
		chromedp.Click(`[data-testid=upload-form] button[type=submit]`),
		chromedp.WaitVisible(`[data-testid=import-result]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=import-rows]`))
	if err != nil || rows != "1000" {
		t.Fatalf("rows shown = %q, %v; want 1000", rows, err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=import-error]`))
	if err != nil || !strings.Contains(msg, "empty_frame.csv") || !strings.Contains(msg, "no data rows") {
		t.Fatalf("error shown = %q, %v", msg, err)
	}
	history, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll(`[data-testid=import-row]`)))
	if err != nil || len(history) != 2 {
		t.Fatalf("history rows = %d, %v; want 2", len(history), err)
	}
}

// TestBrowserUnknownFormatToMapping: in a real browser, a file in no known
// format fails saying what it is not, offers to map its columns, and the
// mapping page (its header and first rows, columns and the date format
// chosen from selects) makes the same file import as generic; a Parquet
// export uploads through the same form.
func TestBrowserUnknownFormatToMapping(t *testing.T) {
	t.Parallel()
	b, url := liveServer(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{Name: "Mappers"})
	sheet, err := filepath.Abs("testdata/kosten.csv")
	if err != nil {
		t.Fatal(err)
	}
	pq, err := filepath.Abs("../ingest/testdata/parquet/cur2_data_export.parquet")
	if err != nil {
		t.Fatal(err)
	}
	ctx := browsertest.New(t, 90*time.Second)
	err = chromedp.Do(ctx,
		chromedp.Navigate(url+"/login"),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitVisible(`[data-testid=dashboard-empty]`),
		chromedp.Navigate(url+"/imports"),
		chromedp.SetUploadFiles(`[data-testid=upload-form] input[type=file]`, []string{sheet}),
		chromedp.Click(`[data-testid=upload-form] button[type=submit]`),
		chromedp.WaitVisible(`[data-testid=map-columns]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=import-error]`))
	if err != nil || !strings.Contains(msg, "It is not an AWS CUR (no lineItem/UnblendedCost column)") || !strings.Contains(msg, "map its columns") {
		t.Fatalf("error shown = %q, %v", msg, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(`[data-testid=map-columns]`),
		chromedp.WaitVisible(`[data-testid=mapping-preview]`),
		chromedp.SetValue(`select[name=date]`, "Datum"),
		chromedp.SetValue(`select[name=date_format]`, "02.01.2006"),
		chromedp.SetValue(`select[name=cost]`, "Betrag"),
		chromedp.SetValue(`select[name=decimal_separator]`, ","),
		chromedp.SetValue(`select[name=currency]`, "Währung"),
		chromedp.SetValue(`select[name=service]`, "Dienst"),
		chromedp.Click(`input[name=tag][value=Team]`),
		chromedp.Click(`[data-testid=mapping-form] button[type=submit]`),
		chromedp.WaitVisible(`.flash-info`),
	)
	if err != nil {
		t.Fatal(err)
	}
	preview, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=mapping-preview]`))
	if err != nil || !strings.Contains(preview, "1.234,56 €") {
		t.Fatalf("preview = %q, %v", preview, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(url+"/imports"),
		chromedp.Click(`[data-testid=upload-form] summary`),
		chromedp.SetValue(`select[name=source]`, "generic"),
		chromedp.SetUploadFiles(`[data-testid=upload-form] input[type=file]`, []string{sheet}),
		chromedp.Click(`[data-testid=upload-form] button[type=submit]`),
		chromedp.WaitVisible(`[data-testid=import-result]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	total, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=import-total]`))
	if err != nil || total != "1,222.06 EUR" {
		t.Fatalf("total = %q, %v", total, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(url+"/imports"),
		chromedp.SetUploadFiles(`[data-testid=upload-form] input[type=file]`, []string{pq}),
		chromedp.Click(`[data-testid=upload-form] button[type=submit]`),
		chromedp.WaitVisible(`[data-testid=import-result]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	src, err := chromedp.Run(ctx, chromedp.Text(`[data-testid=import-source]`))
	rows, err2 := chromedp.Run(ctx, chromedp.Text(`[data-testid=import-rows]`))
	if err != nil || err2 != nil || src != "aws-cur2" || rows != "200" {
		t.Fatalf("Parquet upload: %q, %q rows (%v, %v)", src, rows, err, err2)
	}
}
