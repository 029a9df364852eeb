// Package browsertest drives the machine's headless Chromium (chromedp) for
// end-to-end tests of the pages people use. A missing browser fails the test
// rather than skipping it: install Debian's chromium package (make test does
// it as root via scripts/test-deps).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// findChromium returns the path of a Chromium or Chrome binary, or "".
func findChromium() string {
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// NamePrefix begins the name of every test that drives a browser: make
// test-fast leaves out the tests so named (go test -skip '^TestBrowser').
const NamePrefix = "TestBrowser"

// New starts a headless browser for t and returns a context to run chromedp
// actions in; it is cancelled (and the browser closed) when t ends. Each
// action fails after timeout. A test not named NamePrefix… fails: the fast
// tier would run it, browser and all.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	if !strings.HasPrefix(t.Name(), NamePrefix) {
		t.Fatalf("browsertest: %s drives a browser, so its name must begin with %s (make test-fast leaves those out)", t.Name(), NamePrefix)
	}
	path := findChromium()
	if path == "" {
		t.Fatal("browsertest: no Chromium found: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox cannot start
		chromedp.Flag("headless", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	// Start the browser now, so a broken install fails here, clearly.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	return ctx
}
