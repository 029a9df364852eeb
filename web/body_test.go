package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/burnrate/burnrate/app"
	"github.com/burnrate/burnrate/store"
	"github.com/burnrate/burnrate/store/storetest"
	"github.com/burnrate/burnrate/web"
)

// serveLoopback serves srv through Server.Serve, as burnrate serve does, on
// a loopback port, and returns its address.
func serveLoopback(t *testing.T, srv *web.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func newTestServer(st *store.Store, cfg web.Config) *web.Server {
	return web.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)), testApp(st, app.Config{}), cfg)
}

// orgToken makes an org and an API token for it.
func orgToken(t *testing.T, st *store.Store, name string) (store.Org, store.User, string) {
	t.Helper()
	org, owner := storetest.Org(t, st, storetest.OrgOpts{Name: name})
	_, secret, err := st.CreateAPIToken(ctx(), org.ID, "test", owner.ID)
	if err != nil {
		t.Fatal(err)
	}
	return org, owner, secret
}

// rawUpload is a client on its own connection that sends a request's
// headers and then as much of its body as the test says, as slowly as it
// says.
type rawUpload struct {
	conn net.Conn
	br   *bufio.Reader
}

// startRawUpload sends the headers of a POST with a body of size bytes,
// asking the server to say when it starts reading it (Expect:
// 100-continue).
func startRawUpload(t *testing.T, addr, path, token string, size int) *rawUpload {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: burnrate.test\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: text/csv\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", path, token, size)
	return &rawUpload{conn: conn, br: bufio.NewReader(conn)}
}

// awaitContinue waits up to d for the server's 100 Continue, which it sends
// when it first reads the body.
func (u *rawUpload) awaitContinue(d time.Duration) bool {
	u.conn.SetReadDeadline(time.Now().Add(d))
	defer u.conn.SetReadDeadline(time.Time{})
	line, err := u.br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		return false
	}
	blank, err := u.br.ReadString('\n')
	return err == nil && blank == "\r\n"
}

// trickle sends one byte every interval until the connection fails or stop
// is closed.
func (u *rawUpload) trickle(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if _, err := u.conn.Write([]byte("x")); err != nil {
			return
		}
	}
}

// response reads the final response, waiting up to d: its status and body,
// or status 0 if the server closed the connection without one.
func (u *rawUpload) response(d time.Duration) (int, string, error) {
	u.conn.SetReadDeadline(time.Now().Add(d))
	for {
		res, err := http.ReadResponse(u.br, nil)
		var ne net.Error
		switch {
		case err == nil:
		case errors.As(err, &ne) && ne.Timeout():
			return 0, "", fmt.Errorf("no response within %s", d)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
			return 0, "", nil
		default:
			return 0, "", err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 200 {
			return res.StatusCode, string(body), nil
		}
	}
}

// TestSlowUploadsLeaveOtherOrgsServed opens more slow uploads than the pool
// has connections, each trickling its body a byte at a time. While they
// trickle, another org's API and /healthz must answer promptly, and the
// uploads must hold no database connection; then each slow client must be
// answered 408 (or dropped) once it falls behind the minimum rate.
func TestSlowUploadsLeaveOtherOrgsServed(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	const grace = 3 * time.Second
	tmp := t.TempDir()
	// No import cap here: this is about reading bodies, and the cap would
	// turn most of the uploads away before they were read.
	srv := newTestServer(st, web.Config{Now: testClock, BodyReadGrace: grace, MaxImportsPerOrg: 1000, TempDir: tmp})
	addr := serveLoopback(t, srv)
	_, _, tokenA := orgToken(t, st, "Trickle")
	_, _, tokenB := orgToken(t, st, "Bystander")

	maxConns := int(st.Pool().Config().MaxConns)
	n := max(20, maxConns+4)
	started := time.Now()
	var uploads []*rawUpload
	for range n {
		uploads = append(uploads, startRawUpload(t, addr, "/api/v1/imports?filename=slow.csv", tokenA, 100000))
	}
	// Any body, not only uploads: a budget whose JSON never ends.
	budgets := 4
	for range budgets {
		uploads = append(uploads, startRawUpload(t, addr, "/api/v1/budgets", tokenA, 100000))
	}
	// Wait until the server is reading each body (on a server that reads
	// bodies only once it holds a connection, some never get this far).
	for _, u := range uploads {
		u.awaitContinue(max(0, 2*time.Second-time.Since(started)))
	}
	stop := make(chan struct{})
	var trickling sync.WaitGroup
	for i, u := range uploads {
		if i >= n {
			u.conn.Write([]byte(`{"name": "`))
		}
		trickling.Go(func() { u.trickle(200*time.Millisecond, stop) })
	}
	t.Cleanup(func() { close(stop); trickling.Wait() })

	var peak atomic.Int32
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if a := st.Pool().Stat().AcquiredConns(); a > peak.Load() {
				peak.Store(a)
			}
			select {
			case <-sampling:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	client := &http.Client{Timeout: 2 * time.Second}
	base := "http://" + addr
	for range 3 {
		for _, path := range []string{"/healthz", "/api/v1/spend?from=2026-01-01&to=2026-01-31"} {
			req, _ := http.NewRequest(http.MethodGet, base+path, nil)
			req.Header.Set("Authorization", "Bearer "+tokenB)
			t0 := time.Now()
			res, err := client.Do(req)
			if err != nil {
				t.Fatalf("GET %s while org A trickles %d uploads: %v", path, len(uploads), err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s while org A trickles %d uploads: status %d after %s", path, len(uploads), res.StatusCode, time.Since(t0))
			}
		}
	}
	close(sampling)
	<-sampled
	if p := int(peak.Load()); p >= maxConns {
		t.Errorf("the pool's %d connections were all taken (peak %d) while uploads trickled", maxConns, p)
	}

	// Each slow client is answered once it falls behind: a few seconds
	// after the grace period.
	timeouts := 0
	for i, u := range uploads {
		code, body, err := u.response(grace + 20*time.Second - time.Since(started))
		switch {
		case err != nil:
			t.Errorf("slow upload %d: %v", i, err)
		case code == http.StatusRequestTimeout:
			timeouts++
			if !strings.Contains(body, "too slowly") {
				t.Errorf("slow upload %d: 408 without the reason: %s", i, body)
			}
		case code != 0:
			t.Errorf("slow upload %d: status %d, want 408 or a closed connection: %s", i, code, body)
		}
	}
	if timeouts == 0 {
		t.Errorf("no slow upload was answered 408")
	}
	if elapsed := time.Since(started); elapsed < grace {
		t.Errorf("slow uploads cut off after %s, before the grace period of %s", elapsed, grace)
	}
	assertEmptyDir(t, tmp)
}

// assertEmptyDir waits briefly for dir to be empty: spooled bodies are
// removed as their requests end.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spooled bodies left in %s, e.g. %s", len(entries), dir, entries[0].Name())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLargeUploadsAreSpooledAndRemoved imports a file too large to keep in
// memory, and cuts off two others halfway (one sender vanishes, one
// stalls): the import works from the spooled copy, and no spooled copy is
// left behind.
func TestLargeUploadsAreSpooledAndRemoved(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	tmp := t.TempDir()
	srv := newTestServer(st, web.Config{Now: testClock, BodyReadGrace: time.Second, BodyMinRate: 1 << 20, TempDir: tmp})
	addr := serveLoopback(t, srv)
	_, _, token := orgToken(t, st, "Bulk")

	sample, err := os.ReadFile(focusSample)
	if err != nil {
		t.Fatal(err)
	}
	if len(sample) <= 64<<10 {
		t.Fatalf("sample of %d bytes would be kept in memory; the test needs a larger one", len(sample))
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/imports?filename=focus.csv", bytes.NewReader(sample))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Rows int }
	json.NewDecoder(res.Body).Decode(&got)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || got.Rows != 1000 {
		t.Fatalf("import of %d bytes: status %d, %d rows; want 201, 1000 rows", len(sample), res.StatusCode, got.Rows)
	}
	assertEmptyDir(t, tmp)

	// Half the body, then gone.
	gone := startRawUpload(t, addr, "/api/v1/imports?filename=gone.csv", token, 2*len(sample))
	if !gone.awaitContinue(5 * time.Second) {
		t.Fatal("server never read the body")
	}
	gone.conn.Write(sample)
	time.Sleep(100 * time.Millisecond)
	gone.conn.Close()
	assertEmptyDir(t, tmp)

	// Half the body, then nothing: answered 408 after a second or so.
	stalled := startRawUpload(t, addr, "/api/v1/imports?filename=stalled.csv", token, 2*len(sample))
	if !stalled.awaitContinue(5 * time.Second) {
		t.Fatal("server never read the body")
	}
	stalled.conn.Write(sample)
	code, body, err := stalled.response(20 * time.Second)
	if err != nil || code != http.StatusRequestTimeout {
		t.Fatalf("stalled upload: status %d, %v: %s; want 408", code, err, body)
	}
	assertEmptyDir(t, tmp)
}

// TestImportsPerOrgAreCapped holds an org's two import slots with uploads
// still being sent: a third import of that org, by API or browser, is
// refused with 429 and Retry-After, while another org imports; once the
// uploads end, the org imports again.
func TestImportsPerOrgAreCapped(t *testing.T) {
	t.Parallel()
	st := storetest.New(t)
	srv := newTestServer(st, web.Config{Now: testClock, BodyReadGrace: time.Minute})
	addr := serveLoopback(t, srv)
	_, ownerA, tokenA := orgToken(t, st, "Busy Imports")
	_, _, tokenB := orgToken(t, st, "Other Imports")
	sample, err := os.ReadFile(focusSample)
	if err != nil {
		t.Fatal(err)
	}
	importAs := func(token string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/imports?filename=focus.csv", bytes.NewReader(sample))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}

	held := []*rawUpload{
		startRawUpload(t, addr, "/api/v1/imports?filename=one.csv", tokenA, 100000),
		startRawUpload(t, addr, "/api/v1/imports?filename=two.csv", tokenA, 100000),
	}
	for i, u := range held {
		if !u.awaitContinue(10 * time.Second) {
			t.Fatalf("upload %d: the server never read its body", i)
		}
	}

	res, body := importAs(tokenA)
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third import of org A: status %d, want 429: %s", res.StatusCode, body)
	}
	if res.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	var apiErr struct{ Error string }
	if err := json.Unmarshal([]byte(body), &apiErr); err != nil || !strings.Contains(apiErr.Error, "Busy Imports already has 2 imports running; try again when one finishes") {
		t.Errorf("429 body = %s (%v)", body, err)
	}

	// The browser's upload form gets the same refusal, as a page.
	b := &bundle{st: st, srv: srv}
	c := b.client(t)
	c.login(ownerA.Email)
	c.get("/imports")
	form, ctype := multipartUpload(t, map[string]string{"_csrf": c.csrf}, map[string][]byte{"focus.csv": sample})
	req := httptest.NewRequest(http.MethodPost, "/imports", form)
	req.Header.Set("Content-Type", ctype)
	rec := c.do(req)
	wantStatus(t, rec, http.StatusTooManyRequests)
	if msg := doc(t, rec).Text(); !strings.Contains(msg, "already has 2 imports running") || rec.Header().Get("Retry-After") == "" {
		t.Errorf("browser 429: Retry-After %q, page %q", rec.Header().Get("Retry-After"), msg)
	}

	// Other orgs are not held up.
	if res, body := importAs(tokenB); res.StatusCode != http.StatusCreated {
		t.Fatalf("org B's import while org A is at its cap: status %d: %s", res.StatusCode, body)
	}

	// Once the uploads end, their slots are free again.
	for _, u := range held {
		u.conn.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, body := importAs(tokenA)
		if res.StatusCode == http.StatusCreated {
			break
		}
		if res.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("org A's import after its uploads ended: status %d: %s", res.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
