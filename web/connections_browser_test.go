package web_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/seal"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
	"github.com/burnrate/burnrate/web/browsertest"
)

// TestBrowserConnectionPulls adds an OpenAI connection in a real browser;
// the job queue (running, as in serve) pulls it at once from a loopback
// OpenAI, and the page then shows the run, its rows and the next run,
// never the key; the import history says "via connection".
func TestBrowserConnectionPulls(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testAdminKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		q := r.URL.Query()
		io.WriteString(w, `{"object":"page","data":[{"object":"bucket","start_time":`+q.Get("start_time")+`,"end_time":`+q.Get("end_time")+
			`,"results":[{"object":"organization.costs.result","amount":{"value":42.5,"currency":"usd"},"line_item":"gpt-4o-2024-08-06, input","project_id":"proj_web"},`+
			`{"object":"organization.costs.result","amount":{"value":7.25,"currency":"usd"},"line_item":"gpt-4o-2024-08-06, output","project_id":"proj_web"}]}],"has_more":false,"next_page":null}`)
	}))
	t.Cleanup(openai.Close)
	raw := make([]byte, 32)
	rand.Read(raw)
	key, _ := seal.ParseKey("SECRET_KEY", base64.StdEncoding.EncodeToString(raw))
	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	t.Cleanup(ts.Close)
	a := testApp(st, app.Config{BaseURL: ts.URL, SecretKey: key, OpenAIURL: openai.URL})
	runJobs(t, a)
	ts.Config.Handler = web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), a, web.Config{Now: testClock})
	_, owner := storetest.Org(t, st, storetest.OrgOpts{})

	bctx := browsertest.New(t, 2*time.Minute)
	var page, rows, history string
	var err error
	steps := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(ts.URL + "/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitNotPresent(`[data-testid=login-form]`),
		chromedp.Navigate(ts.URL + "/imports"),
		chromedp.WaitVisible(`[data-testid=connections-link]`),
		chromedp.Click(`[data-testid=connections-link]`),
		chromedp.WaitVisible(`[data-testid=connection-form]`),
		chromedp.SendKeys(`[data-testid=connection-form] input[name=name]`, "OpenAI from the browser"),
		chromedp.SendKeys(`[data-testid=connection-form] input[name=api_key]`, testAdminKey),
		chromedp.Click(`[data-testid=connection-save]`),
	}
	for i, step := range steps {
		sctx, cancel := context.WithTimeout(bctx, 20*time.Second)
		err := chromedp.Do(sctx, step)
		cancel()
		if err != nil {
			body, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
			t.Fatalf("step %d: %v\n%s", i, err, body)
		}
	}
	wctx, cancel := context.WithTimeout(bctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(`[data-testid=connection-row]`)); err != nil {
		html, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("after saving: %v\n%s", err, html)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := chromedp.Do(bctx,
			chromedp.Navigate(ts.URL+"/connections"),
			chromedp.WaitVisible(`[data-testid=connection-row]`),
		); err != nil {
			t.Fatal(err)
		}
		if rows, err = chromedp.Run(bctx, chromedp.Text(`[data-testid=connection-rows]`)); err != nil {
			t.Fatal(err)
		}
		if page, err = chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); err != nil {
			t.Fatal(err)
		}
		if rows != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the connection was not pulled within a minute:\n%s", page)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if rows != "2" || !strings.Contains(page, "status-ok") || strings.Contains(page, "WEBTEST") {
		t.Fatalf("rows %q; page:\n%s", rows, page)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(ts.URL+"/imports"), chromedp.WaitVisible(`main`)); err != nil {
		t.Fatal(err)
	}
	if history, err = chromedp.Run(bctx, chromedp.Text(`main`)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(history, "connection OpenAI from the browser") {
		t.Fatalf("the history does not say where the import came from:\n%s", history)
	}
}

// TestBrowserConnectionAzure adds an Azure export connection through the
// page's Azure fields: the row says where it reads, and the account key
// is nowhere on the page after saving.
func TestBrowserConnectionAzure(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	raw := make([]byte, 32)
	rand.Read(raw)
	key, _ := seal.ParseKey("SECRET_KEY", base64.StdEncoding.EncodeToString(raw))
	ts := httptest.NewServer(web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{SecretKey: key}), web.Config{Now: testClock}))
	t.Cleanup(ts.Close)
	_, owner := storetest.Org(t, st, storetest.OrgOpts{})
	const accountKey = "QVpVUkVURVNUS0VZQVpVUkVURVNUS0VZQVpVUkVURVNUS0VZ0123=="

	bctx := browsertest.New(t, 2*time.Minute)
	var page string
	err := chromedp.Do(bctx,
		chromedp.Navigate(ts.URL+"/login"),
		chromedp.WaitVisible(`input[name=email]`),
		chromedp.SendKeys(`input[name=email]`, owner.Email),
		chromedp.SendKeys(`input[name=password]`, storetest.Password),
		chromedp.Submit(`[data-testid=login-form]`),
		chromedp.WaitNotPresent(`[data-testid=login-form]`),
		chromedp.Navigate(ts.URL+"/connections"),
		chromedp.WaitVisible(`[data-testid=connection-form]`),
		chromedp.SendKeys(`[data-testid=connection-form] input[name=name]`, "Azure from the browser"),
		// Only the selected provider's fields show.
		chromedp.WaitVisible(`[data-testid=api-fields]`),
		chromedp.WaitNotVisible(`[data-testid=azure-fields]`),
		chromedp.WaitNotVisible(`[data-testid=s3-fields]`),
		chromedp.SetValue(`[data-testid=connection-form] select[name=kind]`, "azure-blob"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("[data-testid=connection-form] select[name=kind]").dispatchEvent(new Event("change", {bubbles: true}))`),
		chromedp.WaitVisible(`[data-testid=azure-fields]`),
		chromedp.WaitNotVisible(`[data-testid=api-fields]`),
		chromedp.WaitNotVisible(`[data-testid=s3-fields]`),
		chromedp.SendKeys(`[data-testid=azure-fields] input[name=account]`, "acmebilling"),
		chromedp.SendKeys(`[data-testid=azure-fields] input[name=container]`, "cost-exports"),
		chromedp.SendKeys(`[data-testid=azure-fields] input[name=azure_prefix]`, "exports/focus"),
		chromedp.SendKeys(`[data-testid=azure-fields] input[name=account_key]`, accountKey),
		chromedp.Click(`[data-testid=connection-save]`),
		chromedp.WaitVisible(`[data-testid=connection-row]`),
	)
	if err == nil {
		page, err = chromedp.Run(bctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	}
	if err != nil {
		body, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		t.Fatalf("%v\n%s", err, body)
	}
	if !strings.Contains(page, "acmebilling cost-exports/exports/focus") || !strings.Contains(page, "…23==") || strings.Contains(page, accountKey) {
		t.Fatalf("the row does not say where it reads, or the key is on the page:\n%s", page)
	}
}
