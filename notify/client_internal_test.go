package notify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestDialRefusesPrivateAddresses posts, with private targets not allowed,
// to a loopback server by every spelling of its address, a name included:
// the dialer refuses each after DNS, and the server sees nothing.
func TestDialRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	n := New(nil, nil, Config{})
	for _, target := range []string{srv.URL + "/hook", "http://localhost" + port + "/hook", "http://[::ffff:127.0.0.1]" + port + "/hook",
		"http://[::127.0.0.1]" + port + "/hook", "http://[::]" + port + "/hook", "http://0.0.0.0" + port + "/hook"} {
		o := n.post(context.Background(), target, []byte(`{}`), http.Header{})
		if o.err == nil || !o.permanent || !strings.HasPrefix(o.msg, "refused:") {
			t.Errorf("%s: %+v, want refused for good", target, o)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback server got %d requests", hits.Load())
	}
	// Allowed, the same server is reached.
	if o := New(nil, nil, Config{AllowPrivate: true}).post(context.Background(), srv.URL+"/hook", []byte(`{}`), http.Header{}); o.err != nil || hits.Load() != 1 {
		t.Fatalf("allowed: %+v, hits %d", o, hits.Load())
	}
}

func TestRedirectsStayOnTheHost(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			// Another host: localhost rather than 127.0.0.1.
			http.Redirect(w, r, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/x", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusPermanentRedirect)
		}
	}))
	defer srv.Close()
	n := New(nil, nil, Config{AllowPrivate: true})
	if o := n.post(context.Background(), srv.URL+"/away", []byte(`{}`), http.Header{}); o.err == nil || !strings.Contains(o.msg, "another host") {
		t.Errorf("redirect to another host: %+v", o)
	}
	if elsewhere.Load() != 0 {
		t.Error("the redirect to another host was followed")
	}
	if o := n.post(context.Background(), srv.URL+"/moved", []byte(`{}`), http.Header{}); o.err != nil {
		t.Errorf("redirect on the same host: %+v", o)
	}
}

func TestResponseIsReadBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		chunk := []byte(strings.Repeat("x", 64<<10))
		// Far more than is read: the client must stop, not wait for it all.
		for range 1 << 10 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	n := New(nil, nil, Config{AllowPrivate: true, Timeout: 5 * time.Second})
	start := time.Now()
	o := n.post(context.Background(), srv.URL, []byte(`{}`), http.Header{})
	if o.code != 502 || len(o.msg) > 220 || o.permanent {
		t.Fatalf("outcome = code %d, permanent %v, msg of %d bytes", o.code, o.permanent, len(o.msg))
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("reading the answer took %v", took)
	}
}

func TestURLChecks(t *testing.T) {
	t.Parallel()
	strict, lax := New(nil, nil, Config{}), New(nil, nil, Config{AllowPrivate: true})
	for _, c := range []struct {
		url                   string
		slack, webhook, laxOK bool
	}{
		{"https://hooks.slack.com/services/T0/B0/abc", true, true, true},
		{"https://hooks.slack.com:8443/services/T0/B0/abc", false, true, true},
		{"https://hooks.slack.com.evil.test/services/x", false, true, true},
		{"http://hooks.slack.com/services/T0/B0/abc", false, false, true},
		{"https://example.com/hook", false, true, true},
		{"http://example.com/hook", false, false, true},
		{"https://127.0.0.1/hook", false, false, true},
		{"https://[::1]:8080/hook", false, false, true},
		{"https://10.0.0.5/hook", false, false, true},
		{"https://169.254.169.254/latest/meta-data", false, false, true},
		{"https://localhost/hook", false, false, true},
		{"https://[::127.0.0.1]/hook", false, false, true},
		{"https://[::]/hook", false, false, true},
		{"https://[64:ff9b::a9fe:a9fe]/hook", false, false, true},
		{"https://[::ffff:169.254.169.254]/hook", false, false, true},
		{"https://0.0.0.0/hook", false, false, true},
		{"https://user:pw@example.com/hook", false, false, false},
		{"ftp://example.com/hook", false, false, false},
		{"https://example.com/hook#x", false, false, false},
		{"example.com/hook", false, false, false},
		{"", false, false, false},
	} {
		if got := strict.CheckSlackURL(c.url) == nil; got != c.slack {
			t.Errorf("CheckSlackURL(%q) ok = %v, want %v", c.url, got, c.slack)
		}
		if got := strict.CheckWebhookURL(c.url) == nil; got != c.webhook {
			t.Errorf("CheckWebhookURL(%q) ok = %v, want %v", c.url, got, c.webhook)
		}
		if got := lax.CheckWebhookURL(c.url) == nil; got != c.laxOK {
			t.Errorf("allowing private, CheckWebhookURL(%q) ok = %v, want %v", c.url, got, c.laxOK)
		}
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		"https://hooks.slack.com/services/T000/B000/abcdefghXXXX": "https://hooks.slack.com/…/XXXX",
		"https://example.com/hooks?token=s3cr3tz9":                "https://example.com/…/3tz9",
		"https://example.com":                                     "https://example.com/",
		"https://example.com/":                                    "https://example.com/",
		"https://example.com/abc":                                 "https://example.com/…",
		"not a url":                                               "…",
	} {
		if got := Mask(raw); got != want {
			t.Errorf("Mask(%q) = %q, want %q", raw, got, want)
		}
	}
}
