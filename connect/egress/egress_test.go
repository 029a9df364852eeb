package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "151.101.1.1": true, "2606:4700::1111": true, "2a00:1450:4001:80b::200e": true,
		"127.0.0.1": false, "127.8.9.10": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false,
		"192.168.1.1": false, "169.254.169.254": false, "fe80::1": false, "fd00::1": false, "0.0.0.0": false,
		"0.1.2.3": false, "::": false, "100.64.0.1": false, "224.0.0.1": false, "255.255.255.255": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "::ffff:169.254.169.254": false,
		"64:ff9b::a00:1": false, "64:ff9b::a9fe:a9fe": false, "64:ff9b:1::1": false, "2002:a00:1::": false,
		"2001::1": false, "198.18.0.1": false, "192.0.2.1": false, "203.0.113.9": false, "fec0::1": false,
		// IPv4-compatible IPv6 (::/96): they passed the webhook check.
		"::127.0.0.1": false, "::7f00:1": false, "::a00:1": false, "::8.8.8.8": false,
	} {
		if got := Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	p, err := ParseAllowList(" MinIO.internal. , 10.20.0.0/16, fd00::5,192.168.1.7 ,")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "public addresses and minio.internal, 10.20.0.0/16, fd00::5/128, 192.168.1.7/32" {
		t.Errorf("policy %s", got)
	}
	for _, addr := range []string{"10.20.3.4", "fd00::5", "192.168.1.7", "::ffff:10.20.0.1", "8.8.8.8"} {
		if !p.Allows(netip.MustParseAddr(addr)) {
			t.Errorf("%s refused", addr)
		}
	}
	for _, addr := range []string{"10.21.0.1", "fd00::6", "127.0.0.1", "169.254.169.254"} {
		if p.Allows(netip.MustParseAddr(addr)) {
			t.Errorf("%s allowed", addr)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "http://minio:9000", "user@host", "bad host"} {
		if _, err := ParseAllowList(bad); err == nil || !strings.Contains(err.Error(), "is not") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestDialChecksEveryConnection: a client through the zero policy reaches
// no loopback server, by any spelling; a redirect from an allowed address
// to another private one is refused when it is dialled; a name on the list
// is dialled whatever it resolves to.
func TestDialChecksEveryConnection(t *testing.T) {
	t.Parallel()
	var hits, elsewhere int
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere++ }))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("127.0.0.2 is not routed to loopback here:", err) // every Linux routes 127/8 there
	}
	other.Listener = ln
	other.Start()
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	get := func(p Policy, url string) error {
		c := &http.Client{Transport: p.Transport(Timeouts{Dial: time.Second, TLSHandshake: time.Second, ResponseHeader: time.Second})}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		res, err := c.Do(req)
		if err == nil {
			res.Body.Close()
		}
		return err
	}
	for _, u := range []string{srv.URL, "http://localhost" + port, "http://[::ffff:127.0.0.1]" + port, "http://[::127.0.0.1]" + port} {
		if err := get(Policy{}, u); !errors.Is(err, ErrPrivate) {
			t.Errorf("%s: %v, want refused", u, err)
		}
	}
	if hits != 0 {
		t.Fatalf("the loopback server got %d requests", hits)
	}
	allowOne := Policy{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	if err := get(allowOne, srv.URL); !errors.Is(err, ErrPrivate) || hits != 1 || elsewhere != 0 {
		t.Fatalf("redirected to 127.0.0.2: %v; hits %d, elsewhere %d", err, hits, elsewhere)
	}
	if err := get(Policy{Hosts: []string{"localhost"}}, "http://localhost"+port); err != nil && !errors.Is(err, ErrPrivate) {
		t.Fatalf("a listed name: %v", err)
	}
	if hits != 2 {
		t.Fatalf("a listed name was not dialled: hits %d", hits)
	}
	if err := get(Policy{Any: true}, srv.URL); err != nil || elsewhere != 1 {
		t.Fatalf("any address: %v, elsewhere %d", err, elsewhere)
	}
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	for host, ok := range map[string]bool{
		"example.com": true, "8.8.8.8": true, "127.0.0.1": false, "[::1]": false, "::127.0.0.1": false, "localhost": false,
		"minio.localhost": false, "169.254.169.254": false, "[::ffff:10.0.0.1]": false,
	} {
		if got := (Policy{}).CheckHost(host) == nil; got != ok {
			t.Errorf("CheckHost(%q) ok = %v, want %v", host, got, ok)
		}
	}
	if err := (Policy{Hosts: []string{"localhost"}}).CheckHost("localhost"); err != nil {
		t.Errorf("listed localhost: %v", err)
	}
}
