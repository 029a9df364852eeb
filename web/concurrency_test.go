package web_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/burnrate/burnrate/store/storetest"
)

// TestConcurrentRequestsFitThePool runs many more requests at once than the
// pool has connections. A request holds one fenced connection; if any part
// of it (the nav's org list, a flash, an import) asked the pool for a second
// one, they would all wait on each other forever.
func TestConcurrentRequestsFitThePool(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, owner := storetest.Org(t, b.st, storetest.OrgOpts{})
	c := b.client(t)
	c.login(owner.Email)
	cookies := c.jar.Cookies(base)
	maxConns := int(b.st.Pool().Config().MaxConns)

	done := make(chan struct{})
	var wg sync.WaitGroup
	codes := make(chan int, 8*maxConns)
	for i := range 8 * maxConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := []string{"/dashboard", "/settings", "/members", "/imports", "/tokens"}[i%5]
			req := httptest.NewRequest(http.MethodGet, path, nil)
			for _, ck := range cookies {
				req.AddCookie(ck)
			}
			rec := httptest.NewRecorder()
			b.srv.ServeHTTP(rec, req)
			codes <- rec.Code
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d concurrent requests on a pool of %d did not finish: deadlocked on connections", 8*maxConns, maxConns)
	}
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Fatalf("a concurrent request got %d", code)
		}
	}
}
