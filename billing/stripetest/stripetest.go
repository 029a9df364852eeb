// Package stripetest runs stripe-mock (github.com/stripe/stripe-mock, Stripe's
// own mock of its API, from its OpenAPI spec) for tests, and records what
// each test asks of it. A missing stripe-mock fails the test rather than
// skipping it: scripts/test-deps installs it (go install
// github.com/stripe/stripe-mock@v0.203.0).
package stripetest

import (
	"bufio"
	"bytes"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// Version is the stripe-mock scripts/test-deps installs.
const Version = "v0.203.0"

// Request is one call to the Stripe API, as the mock received it.
type Request struct {
	Method, Path   string
	Form           url.Values // the form-encoded parameters (Stripe's API takes no JSON)
	IdempotencyKey string
	Status         int
	Response       []byte // the JSON stripe-mock answered
}

// capture keeps a copy of what is written through it.
type capture struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *capture) WriteHeader(code int) { c.status = code; c.ResponseWriter.WriteHeader(code) }
func (c *capture) Write(p []byte) (int, error) {
	c.body.Write(p)
	return c.ResponseWriter.Write(p)
}

// Mock is stripe-mock behind a recorder of one test's requests.
type Mock struct {
	URL string // the API base, for billing.Config.APIURL

	mu       sync.Mutex
	requests []Request
}

// Requests returns the requests so far to path (all when path is "").
func (m *Mock) Requests(method, path string) []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Request
	for _, r := range m.requests {
		if (method == "" || r.Method == method) && (path == "" || r.Path == path) {
			out = append(out, r)
		}
	}
	return out
}

var (
	once     sync.Once
	mockURL  *url.URL
	startErr error
)

// Start returns a Mock for t: one stripe-mock process serves the whole test
// binary (it takes a second or two to load Stripe's spec), and each test
// gets a recording proxy of its own in front of it.
func Start(t testing.TB) *Mock {
	t.Helper()
	once.Do(func() { mockURL, startErr = launch() })
	if startErr != nil {
		t.Fatalf("stripetest: %v", startErr)
	}
	m := &Mock{}
	proxy := httputil.NewSingleHostReverseProxy(mockURL)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		if r.Method == http.MethodGet {
			form = r.URL.Query()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// Uncompressed, so that the answer can be read here.
		r.Header.Del("Accept-Encoding")
		cw := &capture{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(cw, r)
		m.mu.Lock()
		m.requests = append(m.requests, Request{Method: r.Method, Path: r.URL.Path, Form: form,
			IdempotencyKey: r.Header.Get("Idempotency-Key"), Status: cw.status, Response: cw.body.Bytes()})
		m.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// binary finds stripe-mock: $STRIPE_MOCK, then PATH, then $GOPATH/bin.
func binary() (string, error) {
	if p := os.Getenv("STRIPE_MOCK"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p, nil
	}
	p := filepath.Join(build.Default.GOPATH, "bin", "stripe-mock")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("stripe-mock not found (STRIPE_MOCK, PATH, %s): run scripts/test-deps, or go install github.com/stripe/stripe-mock@%s", p, Version)
}

var listening = regexp.MustCompile(`Listening for HTTP at address: (\S+)`)

// launch starts stripe-mock on free loopback ports (it names the port it
// got) and waits until it listens. The process dies with the test binary
// (see procAttr).
func launch() (*url.URL, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-http-addr", "127.0.0.1:", "-https-addr", "127.0.0.1:")
	cmd.SysProcAttr = procAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	found := make(chan string, 1)
	var logged bytes.Buffer
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if !sent {
				logged.WriteString(sc.Text() + "\n")
				if m := listening.FindStringSubmatch(sc.Text()); m != nil {
					found <- m[1]
					sent = true
				}
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("%s exited before listening: %s", bin, logged.String())
		}
		return url.Parse("http://" + addr)
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("%s did not listen within 60s", bin)
	}
}
